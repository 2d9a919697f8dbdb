package actor

import "golang.org/x/sys/unix"

// replyPipeBytes is how much of the replies the stream's pipe holds: a page of a long log is a
// 90 kB reply, which the default 64 KiB pipe takes in two writes and a wait for the client in
// between. 1 MiB is what /proc/sys/fs/pipe-max-size lets any user ask by default.
const replyPipeBytes = 1 << 20

// growPipe asks a pipe for room for replyPipeBytes; a refusal (another kind of file, a lower
// system limit) leaves it as it was.
func growPipe(fd int) {
	if isPipeOrSocket(fd) {
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, replyPipeBytes)
	}
}
