package info

import "syscall"

// totalMemoryBytes is the machine's RAM (sysinfo(2)).
func totalMemoryBytes() (int64, error) {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0, err
	}
	return int64(si.Totalram) * int64(si.Unit), nil
}
