package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// hasProcessGroups: Windows has no process groups (a Job Object would be the nearest thing, and vx
// does not use one), so a task's pid names the task's process alone. Once it was reaped its pid
// may already name another process: Run then kills nothing more.
const hasProcessGroups = false

// newGroupAttr: no process group to ask for on Windows.
func newGroupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// errNoShell is why a task's command cannot run on Windows without sh.
var errNoShell = errors.New("a task's command runs with sh, and there is no sh on PATH (Git for Windows has one: put its usr\\bin on PATH)")

// shellCommand runs script with the sh found on PATH (Git for Windows' or MSYS2's); without one
// it refuses, as cmd.exe would read the script differently.
func shellCommand(script string) (*exec.Cmd, error) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		return nil, errNoShell
	}
	return exec.Command(sh, "-c", script), nil
}

// resumeGroup: Windows has no stopped processes to resume.
func resumeGroup(int) {}

// fillUsage takes the CPU times os.ProcessState gives; Windows reports no peak RSS for a reaped
// process, so PeakRSSBytes stays 0.
func (r *Result) fillUsage(state *os.ProcessState) {
	r.UserCPU = state.UserTime()
	r.SysCPU = state.SystemTime()
}

// KillGroup terminates the process pgid (TerminateProcess, exit code 1); a process already gone
// is not an error. Windows delivers no signals to a process started without a console of its own,
// so every sig, SIGTERM included, ends the process at once: a Windows task gets no grace period.
// Only that process is ended, not the processes it started (Windows has no process groups). It
// refuses pgid <= 1 and vx itself.
func KillGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 || pgid == os.Getpid() {
		return fmt.Errorf("proc: refusing to signal process %d", pgid)
	}
	return terminate(pgid, sig)
}

// killPid ends one process as KillGroup does.
func killPid(pid int, sig syscall.Signal) error {
	if pid <= 1 || pid == os.Getpid() {
		return fmt.Errorf("proc: refusing to signal pid %d", pid)
	}
	return terminate(pid, sig)
}

func terminate(pid int, sig syscall.Signal) error {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return nil // no such process
	}
	if err != nil {
		return fmt.Errorf("proc: send %s to pid %d: %w", sig, pid, err)
	}
	defer windows.CloseHandle(h)
	// A process that already exited refuses termination with access denied.
	if err := windows.TerminateProcess(h, 1); err != nil && !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return fmt.Errorf("proc: send %s to pid %d: %w", sig, pid, err)
	}
	return nil
}
