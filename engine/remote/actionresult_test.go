package remote

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/vzn/vx/engine/graph"
)

func TestActionResultRoundTrip(t *testing.T) {
	meta := digest{strings.Repeat("a", 64), 120}
	out := digest{strings.Repeat("b", 64), 4096}
	log := digest{strings.Repeat("c", 64), 17}
	ar := actionResult{files: map[string]digest{arMetaPath: meta, arOutputsPath: out}, stdout: &log}
	data := ar.encode([]string{arMetaPath, arOutputsPath})
	// What a server adds (execution_metadata, field 9) is skipped.
	data = protowire.AppendTag(data, 9, protowire.BytesType)
	data = protowire.AppendBytes(data, []byte{0x0a, 0x01, 'w'})
	got, err := decodeActionResult(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.files[arMetaPath] != meta || got.files[arOutputsPath] != out || got.stdout == nil || *got.stdout != log || got.exitCode != 0 {
		t.Fatalf("round trip: %+v", got)
	}
	if _, err := decodeActionResult(data[:len(data)-2]); err == nil {
		t.Fatal("a truncated ActionResult decoded")
	}

	// Inline contents travel with their file, and an inline log in place of its digest.
	ar.inline = map[string][]byte{arOutputsPath: []byte("archive"), arMetaPath: {}}
	ar.stdoutRaw = []byte("log\n")
	got, err = decodeActionResult(ar.encode([]string{arMetaPath, arOutputsPath}))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.inline[arOutputsPath]) != "archive" || got.inline[arMetaPath] == nil || len(got.inline[arMetaPath]) != 0 ||
		string(got.stdoutRaw) != "log\n" || got.stdout != nil || got.files[arOutputsPath] != out {
		t.Fatalf("round trip with inline contents: %+v", got)
	}
}

// The blobs fetched beside the entry document are the archive and the log, each once, and never a
// name that is not a digest or a size a reader would refuse.
func TestActionResultBlobs(t *testing.T) {
	out := digest{strings.Repeat("b", 64), 4096}
	log := digest{strings.Repeat("c", 64), 17}
	meta := digest{strings.Repeat("a", 64), 120}
	cases := []struct {
		name string
		ar   actionResult
		want []digest
	}{
		{"archive and log", actionResult{files: map[string]digest{arMetaPath: meta, arOutputsPath: out}, stdout: &log}, []digest{out, log}},
		{"log alone", actionResult{files: map[string]digest{arMetaPath: meta}, stdout: &log}, []digest{log}},
		{"the same bytes twice", actionResult{files: map[string]digest{arOutputsPath: out}, stdout: &out}, []digest{out}},
		{"not a digest", actionResult{files: map[string]digest{arOutputsPath: {"../../etc/passwd", 10}}}, nil},
		{"empty", actionResult{files: map[string]digest{arOutputsPath: {strings.Repeat("b", 64), 0}}}, nil},
		{"too large", actionResult{files: map[string]digest{arOutputsPath: {strings.Repeat("b", 64), MaxBlobBytes + 1}}}, nil},
		{"negative", actionResult{stdout: &digest{strings.Repeat("c", 64), -1}}, nil},
		{"inline", actionResult{files: map[string]digest{arMetaPath: meta, arOutputsPath: out}, stdout: &log,
			inline: map[string][]byte{arOutputsPath: []byte("x")}, stdoutRaw: []byte("y")}, nil},
		{"archive inline, log a blob", actionResult{files: map[string]digest{arOutputsPath: out}, stdout: &log,
			inline: map[string][]byte{arOutputsPath: []byte("x")}}, []digest{log}},
	}
	for _, c := range cases {
		if got := c.ar.blobs(); !slices.Equal(got, c.want) {
			t.Errorf("%s: blobs %v, want %v", c.name, got, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	env := map[string]string{"TOK": "s3cret", EnvURL: "http://127.0.0.1:9"}
	getenv := func(k string) string { return env[k] }
	s, err := Resolve(&graph.RemoteCache{URL: "http://x", TokenEnv: "TOK", Mode: "read"}, getenv, "")
	if err != nil || s.URL != "http://127.0.0.1:9" || s.Token != "s3cret" || s.Mode != graph.RemoteRead || s.Protocol != ProtocolBazel {
		t.Fatalf("resolve: %+v %v", s, err)
	}
	if s, _ := Resolve(&graph.RemoteCache{URL: "http://x"}, getenv, graph.RemoteOff); s.Mode != graph.RemoteOff {
		t.Fatalf("the flag did not turn it off: %+v", s)
	}
	if _, err := Resolve(&graph.RemoteCache{URL: "http://x", Protocol: "turbo"}, getenv, ""); err == nil {
		t.Fatal("a turbo cache without team or slug resolved")
	}
	if _, err := Resolve(&graph.RemoteCache{URL: "http://x", SignatureKeyEnv: "NOPE"}, getenv, ""); err == nil {
		t.Fatal("a missing signature key resolved")
	}
	if s, _ := Resolve(nil, func(string) string { return "" }, ""); s.Mode != graph.RemoteOff {
		t.Fatalf("no URL: want off, got %+v", s)
	}
	r := ReportOf(&graph.RemoteCache{URL: "http://x", TokenEnv: "TOK"}, func(k string) string { return map[string]string{"TOK": "s3cret"}[k] }, t.TempDir())
	if r.Token != "***" || strings.Contains(r.Summary(), "s3cret") {
		t.Fatalf("the token shows: %+v", r)
	}
}
