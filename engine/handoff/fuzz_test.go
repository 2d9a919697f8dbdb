package handoff

import (
	"bytes"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/store"
)

// roundTripSeeds are the wire forms of hand-offs of each shape: with a file state, without, with
// an index whose intact hits' entries come without their listing.
func roundTripSeeds(t testing.TB) [][]byte {
	snap := filestate.NewSnapshot("/ws", "/ws/.vx", map[string]*filestate.Dir{
		".":      {Entries: []filestate.Entry{{Name: "package.json", Visible: true, Info: filestate.Info{Mode: 0o644, Size: 2, MtimeNs: 5, Ino: 9}}, {Name: "src", Info: filestate.Info{Mode: 0o755 | 1<<31}}}},
		"src":    {Entries: []filestate.Entry{{Name: "a.js", Visible: true, Info: filestate.Info{Mode: 0o644, Size: 12, Hash: "ab"}}}},
		"vendor": {Entries: []filestate.Entry{{Name: "node_modules", Opaque: true, Info: filestate.Info{Mode: 0o755 | 1<<31}}}},
	})
	at := time.Unix(0, 1_700_000_000_123_456_789)
	entry := func(key, id string) store.Entry {
		return store.Entry{Hash: key, TaskID: id, Project: id[:1], Command: "tsc", OutputsBlob: "ob-" + key, LogBlob: "lb",
			Size: 10, Duration: time.Millisecond, ExitCode: 0, Created: at, LastUsed: at.Add(time.Second),
			Outputs: []store.OutputFile{{Path: "dist/a.js", Size: 4, Mode: 0o644, Hash: "h"}, {Path: "dist/l", Mode: 0o777 | 1<<27, Link: "a.js"}}}
	}
	index := &Index{State: StateStamp{Index: filestate.Info{Mode: 0o644, Size: 4096, MtimeNs: 17, Ino: 3}},
		Entries: map[string]store.Entry{"k1": entry("k1", "a#build"), "k2": entry("k2", "b#build")},
		Runs:    map[string][]store.CommandRun{"a#build": {{Status: store.StatusMiss, Duration: time.Second, PeakRSSBytes: 1 << 20}}, "b#build": nil}}
	keys := map[string]string{"a#build": "k1", "b#build": "k2"}
	var seeds [][]byte
	for _, h := range []*Handoff{
		{},
		{Key: "key", Files: snap, Stamp: "stamp", Known: Known{Keys: keys}},
		{Key: "key", Files: snap, Stamp: "stamp", Known: Known{Keys: keys, Index: index}},
		{Key: "key", Root: "/ws", StateDir: "/ws/.vx", Stamp: "stamp", Known: Known{Keys: keys, Index: index,
			Intact: map[string]IntactHit{"a#build": {Blob: "ob-k1", Files: 2, Seen: "seen"}}}},
	} {
		var buf bytes.Buffer
		if err := Write(&buf, h); err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, buf.Bytes())
	}
	return seeds
}

// Whatever bytes a hand-off's reader is given, it answers an error or a hand-off that writes
// and reads back as itself: the same key, stamp, keys, index, intact hits, folders and file
// state, and the same wire form written again.
func FuzzRoundTrip(f *testing.F) {
	for _, seed := range roundTripSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, wire []byte) {
		h, err := Read(bytes.NewReader(wire))
		if err != nil {
			return
		}
		var once bytes.Buffer
		if err := Write(&once, h); err != nil {
			t.Fatal(err)
		}
		back, err := Read(bytes.NewReader(once.Bytes()))
		if err != nil {
			t.Fatalf("a hand-off written from one read does not read: %v", err)
		}
		var twice bytes.Buffer
		if err := Write(&twice, back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatal("a hand-off read back writes another wire form")
		}
		if back.Key != h.Key || back.Stamp != h.Stamp || back.Root != h.Root || back.StateDir != h.StateDir ||
			!maps.Equal(back.Keys, h.Keys) || !maps.Equal(back.Intact, h.Intact) {
			t.Fatalf("read back %+v, wrote %+v", back, h)
		}
		if (back.Files == nil) != (h.Files == nil) || h.Files != nil && !bytes.Equal(back.Files.Encoded(), h.Files.Encoded()) {
			t.Fatal("the file state read back is not the one written")
		}
		if (back.Index == nil) != (h.Index == nil) || h.Index != nil && (back.Index.State != h.Index.State ||
			!reflect.DeepEqual(back.Index.Runs, h.Index.Runs) || len(back.Index.Entries) != len(h.Index.Entries)) {
			t.Fatalf("the index read back %+v, wrote %+v", back.Index, h.Index)
		}
	})
}
