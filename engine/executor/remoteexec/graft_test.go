package remoteexec

import (
	"testing"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/store"
)

// An upstream output is grafted by its digest, never read: its blob comes from the workspace
// path it names, else the local blob store, else only the engine holds it; a path the key's
// files hold already is not grafted twice.
func TestGraftByDigest(t *testing.T) {
	cas := store.NewCAS(t.TempDir())
	held, err := cas.Put([]byte("held here\n"))
	if err != nil {
		t.Fatal(err)
	}
	remoteOnly := DigestOf([]byte("only on the engine\n"))
	e := &Executor{CAS: cas}
	inputs, blobs := e.graft([]Input{{Path: "packages/b/main.txt", Digest: DigestOf([]byte("m"))}}, []executor.GraftedInput{
		{RemoteOutput: executor.RemoteOutput{Path: "packages/a/dist/local.txt", Hash: held, Size: 10}},
		{RemoteOutput: executor.RemoteOutput{Path: "packages/a/dist/remote.txt", Hash: remoteOnly.Hash, Size: remoteOnly.Size, Executable: true}},
		{RemoteOutput: executor.RemoteOutput{Path: "packages/a/dist/disk.txt", Hash: held, Size: 10}, Source: "/nowhere/disk.txt"},
		{RemoteOutput: executor.RemoteOutput{Path: "packages/a/dist/alias", Link: "remote.txt"}},
		{RemoteOutput: executor.RemoteOutput{Path: "packages/b/main.txt", Hash: held, Size: 10}},
	})
	if len(inputs) != 5 || inputs[2].Digest != remoteOnly || !inputs[2].Executable || inputs[4].Target != "remote.txt" {
		t.Fatalf("inputs %+v", inputs)
	}
	if len(blobs) != 3 || blobs[0].Path != cas.Path(held) || blobs[1].Path != "" || blobs[1].Data != nil ||
		blobs[1].Hash != remoteOnly.Hash || blobs[2].Path != "/nowhere/disk.txt" {
		t.Fatalf("blobs %+v", blobs)
	}
	if _, err := BuildTree(inputs); err != nil {
		t.Fatal(err)
	}
}
