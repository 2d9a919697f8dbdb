package runout

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
)

// TestRemoteStageOnStatusLine: a task running on a remote engine shows its stage there on the
// terminal's status line, and no more once it finished.
func TestRemoteStageOnStatusLine(t *testing.T) {
	var out bytes.Buffer
	d := NewDisplay(&out, true, mask.New(), 2, LogOptions{}, nil)
	d.Started("a#build")
	d.Started("b#build")
	d.RemoteStage("a#build", "queued")
	d.RemoteStage("a#build", "executing")
	last := out.String()[strings.LastIndex(out.String(), "\r"):]
	if !strings.Contains(last, "running a#build (remote: executing), b#build") {
		t.Fatalf("status line %q", last)
	}
	d.Finished(store.Execution{TaskID: "a#build", Status: store.StatusMiss})
	last = out.String()[strings.LastIndex(out.String(), "\r"):]
	if strings.Contains(last, "remote") || !strings.Contains(last, "running b#build") {
		t.Fatalf("status line after a#build finished %q", last)
	}
}

// TestOutputsKeptRemoteOnStatusLine: a task whose outputs stayed on the engine (--download) says
// so on its line, hit or run, rather than that it restored nothing.
func TestOutputsKeptRemoteOnStatusLine(t *testing.T) {
	var out bytes.Buffer
	d := NewDisplay(&out, false, mask.New(), 2, LogOptions{}, nil)
	none := 0
	d.Finished(store.Execution{TaskID: "a#build", Status: store.StatusHit, RestoredFiles: &none, OutputsRemote: true})
	d.Finished(store.Execution{TaskID: "b#build", Status: store.StatusMiss, OutputsRemote: true})
	d.Finished(store.Execution{TaskID: "c#build", Status: store.StatusHit, RestoredFiles: &none})
	got := out.String()
	for _, want := range []string{"a#build: hit, outputs kept remote (", "b#build: miss, outputs kept remote (", "c#build: hit, restored 0 files ("} {
		if !strings.Contains(got, want) {
			t.Errorf("status lines %q lack %q", got, want)
		}
	}
}
