package proc

// CloseInheritedOnExec does nothing on Windows: a child inherits only the handles os/exec lists
// for it (PROC_THREAD_ATTRIBUTE_HANDLE_LIST).
func CloseInheritedOnExec() error { return nil }
