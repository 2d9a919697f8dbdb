package handoff

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/internal/testkit"
)

// A hand-off reads back as written, and a cut or altered one reads as none.
func TestHandoffWire(t *testing.T) {
	snap := filestate.NewSnapshot("/ws", "/ws/.vx", map[string]*filestate.Dir{
		".": {Entries: []filestate.Entry{{Name: "package.json", Visible: true, Info: filestate.Info{Mode: 0o644, Size: 2}}}},
	})
	h := &Handoff{Key: "the order's key", Files: snap, Stamp: "stamp", Known: Known{Keys: map[string]string{"a#build": "k1", "b#build": "k2"}}}
	got, wire := roundTrip(t, h)
	if got.Key != h.Key || got.Stamp != h.Stamp || !maps.Equal(got.Keys, h.Keys) || got.Files.Root() != "/ws" || got.Files.StateDir() != "/ws/.vx" {
		t.Fatalf("read back %+v", got)
	}
	if _, err := got.Files.Lstat("package.json"); err != nil {
		t.Errorf("the handed file state lost package.json: %v", err)
	}
	checkCutsRefused(t, wire)
	if _, err := Read(bytes.NewReader(append([]byte("VXHO\x09"), wire[5:]...))); err == nil {
		t.Error("a hand-off of another version read")
	}
}

// What a server knew of the index reads back as written, and a cut one reads as none.
func TestHandedIndexWire(t *testing.T) {
	snap := filestate.NewSnapshot("/ws", "/ws/.vx", map[string]*filestate.Dir{})
	exit := time.UnixMilli(1_700_000_000_123)
	index := &Index{
		State: StateStamp{Index: filestate.Info{Mode: 0o644, Size: 4096, MtimeNs: 17, Ino: 3}, WAL: filestate.Info{Size: -1}},
		Entries: map[string]store.Entry{"k1": {Hash: "k1", TaskID: "a#build", Project: "a", Command: "tsc", OutputsBlob: "ob", LogBlob: "lb",
			Size: 10, Duration: 3 * time.Millisecond, ExitCode: 0, Created: exit, LastUsed: exit.Add(time.Second),
			Outputs: []store.OutputFile{{Path: "dist/a.js", Size: 4, Mode: 0o644, Hash: "h"}, {Path: "dist/l", Mode: 0o777 | 1<<27, Link: "a.js"}}}},
		Runs: map[string][]store.CommandRun{"a#build": {{Status: store.StatusMiss, Duration: time.Second, PeakRSSBytes: 1 << 20}}, "b#build": nil},
	}
	got, wire := roundTrip(t, &Handoff{Files: snap, Known: Known{Keys: map[string]string{"a#build": "k1"}, Index: index}})
	if !reflect.DeepEqual(got.Index, index) {
		t.Fatalf("read back\n%+v\nwrote\n%+v", got.Index, index)
	}
	checkCutsRefused(t, wire)
}

// A hand-off without its file state, its intact hits' entries without their listing, reads back
// as written; the child reads those entries again should it restore one.
func TestHandoffWithoutFiles(t *testing.T) {
	entry := func(key, id string) store.Entry {
		return store.Entry{Hash: key, TaskID: id, Project: id[:1], Command: "tsc", OutputsBlob: "ob-" + key, LogBlob: "lb",
			Created: time.UnixMilli(1), LastUsed: time.UnixMilli(2), Outputs: []store.OutputFile{{Path: "dist/a.js", Size: 4, Mode: 0o644, Hash: "h"}}}
	}
	index := &Index{Entries: map[string]store.Entry{"k1": entry("k1", "a#build"), "k2": entry("k2", "b#build")}, Runs: map[string][]store.CommandRun{}}
	h := &Handoff{Root: "/ws", StateDir: "/ws/.vx", Stamp: "stamp", Known: Known{Keys: map[string]string{"a#build": "k1", "b#build": "k2"}, Index: index,
		Intact: map[string]IntactHit{"a#build": {Blob: "ob-k1", Files: 1, Seen: "seen"}}}}
	got, wire := roundTrip(t, h)
	if got.Files != nil || got.Root != "/ws" || got.StateDir != "/ws/.vx" || !maps.Equal(got.Intact, h.Intact) || !maps.Equal(got.Keys, h.Keys) {
		t.Fatalf("read back %+v", got)
	}
	a, b := got.Index.Entries["k1"], got.Index.Entries["k2"]
	if a.Outputs != nil || !got.Index.Unlisted["k1"] || a.OutputsBlob != "ob-k1" || a.LogBlob != "lb" {
		t.Errorf("the intact hit's entry: %+v, unlisted %v", a, got.Index.Unlisted)
	}
	if !reflect.DeepEqual(b, index.Entries["k2"]) || got.Index.Unlisted["k2"] {
		t.Errorf("the other entry: %+v, unlisted %v", b, got.Index.Unlisted)
	}
	checkCutsRefused(t, wire)
}

// A handed index is taken while the state folder stamps as it did, and not after a commit, a
// checkpoint or an eviction moved it.
func TestHandedIndexCurrent(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"index.db", "index.db-wal"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "cas"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &Index{State: StampState(dir, "")}
	if h.Current(dir, "") != h {
		t.Fatal("an index nothing wrote since was not taken")
	}
	var none *Index
	if none.Current(dir, "") != nil {
		t.Fatal("no index read as one")
	}
	for _, change := range []func() error{
		func() error { return os.WriteFile(filepath.Join(dir, "index.db-wal"), []byte("xy"), 0o644) },
		func() error { return os.Mkdir(filepath.Join(dir, "cas", "ab"), 0o755) },
		func() error { return os.Remove(filepath.Join(dir, "index.db-wal")) },
	} {
		if err := change(); err != nil {
			t.Fatal(err)
		}
		if h.Current(dir, "") != nil {
			t.Fatal("an index taken after the state folder changed")
		}
		h = &Index{State: StampState(dir, "")}
	}
}

// The stamp moves with a task's config and with the environment, but not with the marker of
// the call.
func TestStamp(t *testing.T) {
	ws := testkit.BuildWorkspace("a", "b")
	ids := ws.TaskIDs()
	env := []string{"PATH=/bin", "HOME=/home/u"}
	base := Stamp(ws, ids, env)
	if Stamp(ws, ids, append([]string{CallMarkerPrefix + "x=1"}, env...)) != base {
		t.Error("the call's marker moved the stamp")
	}
	if Stamp(ws, ids, []string{env[1], env[0]}) != base {
		t.Error("the environment's order moved the stamp")
	}
	if Stamp(ws, ids, append(env, "CI=1")) == base {
		t.Error("another variable did not move the stamp")
	}
	if Stamp(ws, ids[:len(ids)-1], env) == base {
		t.Error("another selection did not move the stamp")
	}
	task, _ := ws.Task(ids[0])
	was := task.Command
	task.Command += " --other"
	if Stamp(ws, ids, env) == base {
		t.Error("another command did not move the stamp")
	}
	task.Command = was

}

// The stamp of the state folder moves with a write (size, mtime, a replaced file), not
// with a change of owner alone, which moves only the change time.
func TestStateStampIgnoresChangeTime(t *testing.T) {
	base := filestate.Info{Mode: 0o644, Size: 4096, MtimeNs: 10, CtimeNs: 10, Ino: 7}
	stamp := func(wal filestate.Info) StateStamp { return StateStamp{Index: base, WAL: wal, CAS: base} }
	chowned := base
	chowned.CtimeNs = 20
	if !stamp(base).Same(stamp(chowned)) {
		t.Error("a change of owner moved the stamp")
	}
	for _, moved := range []func(*filestate.Info){
		func(i *filestate.Info) { i.Size += 4120 },
		func(i *filestate.Info) { i.MtimeNs++ },
		func(i *filestate.Info) { i.Ino++ },
	} {
		wal := base
		moved(&wal)
		if stamp(base).Same(stamp(wal)) {
			t.Errorf("a write (%+v) did not move the stamp", wal)
		}
	}
}

// checkCutsRefused checks that a hand-off's wire form cut anywhere, or with a byte after it,
// reads as none.
func checkCutsRefused(t *testing.T, wire []byte) {
	t.Helper()
	for n := range len(wire) {
		if _, err := Read(bytes.NewReader(wire[:n])); err == nil {
			t.Fatalf("a hand-off cut at %d of %d bytes read", n, len(wire))
		}
	}
	if _, err := Read(bytes.NewReader(append(bytes.Clone(wire), 0))); err == nil {
		t.Error("a hand-off with a byte after it read")
	}
}

// roundTrip writes h and reads it back, and answers what it read and the wire form.
func roundTrip(t *testing.T, h *Handoff) (*Handoff, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, h); err != nil {
		t.Fatal(err)
	}
	got, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return got, buf.Bytes()
}
