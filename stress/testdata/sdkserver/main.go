// Command sdkserver is a bare MCP server built from the official Go SDK alone, over stdio: the
// yardstick of BenchmarkMCPInitializeVersusSDK.
package main

import (
	"context"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "sdkserver", Version: "1"}, nil)
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
