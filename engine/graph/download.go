package graph

import "fmt"

// The values of vx run --download and remote.download: what of a run's remote work comes back
// to this machine.
const (
	// DownloadAll brings every task's outputs into the workspace, as a local run leaves them.
	DownloadAll = "all"
	// DownloadRequested brings the outputs of the tasks named on the command line only.
	DownloadRequested = "outputs-of-requested"
	// DownloadMinimal brings nothing that no local task needs.
	DownloadMinimal = "minimal"
)

// CheckDownload refuses a value of --download or remote.download (named by what) that is not
// one of all, outputs-of-requested and minimal.
func CheckDownload(what, v string) error {
	switch v {
	case DownloadAll, DownloadRequested, DownloadMinimal:
		return nil
	}
	return fmt.Errorf("%s %q is not one of all, outputs-of-requested, minimal", what, v)
}
