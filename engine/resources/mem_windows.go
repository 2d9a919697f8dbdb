package resources

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

var globalMemoryStatusEx = windows.NewLazySystemDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")

// memoryStatusEx is Windows' MEMORYSTATUSEX.
type memoryStatusEx struct {
	length, memoryLoad           uint32
	totalPhys, availPhys         uint64
	totalPageFile, availPageFile uint64
	totalVirtual, availVirtual   uint64
	availExtendedVirtual         uint64
}

// totalMemoryBytes is the machine's RAM (GlobalMemoryStatusEx).
func totalMemoryBytes() (int64, error) {
	ms := memoryStatusEx{length: uint32(unsafe.Sizeof(memoryStatusEx{}))}
	if ok, _, err := globalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&ms))); ok == 0 {
		return 0, err
	}
	return int64(ms.totalPhys), nil
}

// availableMemoryBytes is the machine's RAM: vx reads no memory limit of its own here.
func availableMemoryBytes() (int64, bool, error) {
	total, err := totalMemoryBytes()
	return total, false, err
}
