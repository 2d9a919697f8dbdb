package logging

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal pair, or skips the test where there is none.
func openPty(t *testing.T) (controller, terminal *os.File) {
	t.Helper()
	controller, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { controller.Close() })
	fd := int(controller.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pty number: %v", err)
	}
	terminal, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pty: %v", err)
	}
	t.Cleanup(func() { terminal.Close() })
	return controller, terminal
}

func TestTerminalIsConsoleFormat(t *testing.T) {
	controller, terminal := openPty(t)
	log, err := New(terminal, "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Str("task", "app#build").Msg("started")
	if err := controller.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := controller.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	line := string(buf[:n])
	if strings.HasPrefix(line, "{") || !strings.Contains(line, "started") || !strings.Contains(line, "app#build") {
		t.Errorf("terminal got %q, want console format", line)
	}
}
