package actor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/vzn/vx/actor/actortest"
	"github.com/vzn/vx/actor/tool"
)

// Markers the printer tool writes through each way of reaching fd 1; each must
// land on stderr, none on the reply stream.
const (
	markOSStdout = "marker-os-stdout"
	markPrintln  = "marker-fmt-println"
	markRawWrite = "marker-raw-write-fd1"
	markChild    = "marker-child-inherited-stdout"
)

// printerTool writes to fd 1 every way a process can: os.Stdout, fmt.Println,
// a raw write(1, …) and a child given os.Stdout.
func printerTool() tool.Tool {
	return tool.New(tool.Tool{
		Name: "printer", Description: "Writes to fd 1 every way a process can.",
		// It changes nothing, so it is answered when stdin ends right after the call.
		Annotations: tool.Annotations{ReadOnlyHint: ptr(true)},
	}, func(ctx context.Context, _ *tool.Call, _ json.RawMessage) (any, error) {
		fmt.Fprintln(os.Stdout, markOSStdout)
		fmt.Println(markPrintln)
		if _, err := syscall.Write(1, []byte(markRawWrite+"\n")); err != nil {
			return nil, fmt.Errorf("raw write: %w", err)
		}
		cmd := exec.CommandContext(ctx, "sh", "-c", "echo "+markChild)
		cmd.Stdout = os.Stdout
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("child: %w", err)
		}
		return map[string]bool{"printed": true}, nil
	})
}

// testTools are the tools the actor tests serve: actortest's and the printer.
func testTools() []tool.Tool { return append(actortest.Tools(), printerTool()) }
