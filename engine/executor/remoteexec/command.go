package remoteexec

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Spec is what a task's Command holds.
type Spec struct {
	// Shell is the task's command, run as `sh -c Shell`.
	Shell string
	// Dir is the project folder, slash-separated and relative to the input root ("" for the root).
	Dir string
	// Env is the task's declared environment by name. PATH and HOME must be among them: a worker's
	// own are no part of the key.
	Env map[string]string
	// Outputs are the output paths the worker collects, relative to Dir (files or folders).
	Outputs []string
	// Platform are the properties a worker must match exactly, by name.
	Platform map[string]string
}

// Command is the Command message of spec: arguments `sh -c Shell`, the environment and the
// platform's properties sorted by name, the output paths sorted, the working folder Dir.
func Command(spec Spec) (*pb.Command, error) {
	for _, name := range []string{"PATH", "HOME"} {
		if _, ok := spec.Env[name]; !ok {
			return nil, fmt.Errorf("a remote command needs an explicit %s", name)
		}
	}
	if spec.Dir != "" {
		if err := checkPath(spec.Dir); err != nil {
			return nil, fmt.Errorf("working folder: %w", err)
		}
	}
	cmd := &pb.Command{Arguments: []string{"sh", "-c", spec.Shell}, WorkingDirectory: spec.Dir}
	for _, name := range slices.Sorted(maps.Keys(spec.Env)) {
		if name == "" || strings.Contains(name, "=") {
			return nil, fmt.Errorf("environment variable name %q", name)
		}
		cmd.EnvironmentVariables = append(cmd.EnvironmentVariables, &pb.Command_EnvironmentVariable{Name: name, Value: spec.Env[name]})
	}
	outputs := slices.Clone(spec.Outputs)
	slices.Sort(outputs)
	outputs = slices.Compact(outputs)
	for _, o := range outputs {
		if err := checkPath(o); err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
	}
	cmd.OutputPaths = outputs
	if len(spec.Platform) > 0 {
		cmd.Platform = &pb.Platform{}
		for _, name := range slices.Sorted(maps.Keys(spec.Platform)) {
			cmd.Platform.Properties = append(cmd.Platform.Properties, &pb.Platform_Property{Name: name, Value: spec.Platform[name]})
		}
	}
	return cmd, nil
}

// Action is a task's Action: its Command, its input root, its timeout (0 for the engine's), and
// the same platform as its Command (the API asks both to carry it). It answers the Action's bytes
// and digest with the Command's, all of which the CAS must hold before Execute.
type Action struct {
	Action, Command []byte
	Digest          Digest
	CommandDigest   Digest
}

// NewAction builds the Action of cmd over the input root, bounded by timeout.
func NewAction(cmd *pb.Command, root Digest, timeout time.Duration) Action {
	cmdData := marshal(cmd)
	a := &pb.Action{CommandDigest: DigestOf(cmdData).Proto(), InputRootDigest: root.Proto(), Platform: cmd.GetPlatform()}
	if timeout > 0 {
		a.Timeout = durationpb.New(timeout)
	}
	data := marshal(a)
	return Action{Action: data, Command: cmdData, Digest: DigestOf(data), CommandDigest: DigestOf(cmdData)}
}
