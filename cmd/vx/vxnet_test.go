package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// vxnetMain is the `vxnet` program of the sandbox scripts, a network client a task runs:
//
//	vxnet connect ADDR          a TCP connection to ADDR
//	vxnet resolve SERVER NAME   NAME's addresses, asked of the DNS server SERVER over UDP
//
// It prints what it got and exits 0, or prints the error and exits 1.
func vxnetMain() {
	args := os.Args[1:]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var err error
	switch {
	case len(args) == 2 && args[0] == "connect":
		var conn net.Conn
		if conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", args[1]); err == nil {
			conn.Close()
			fmt.Println("connected to", args[1])
		}
	case len(args) == 3 && args[0] == "resolve":
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "udp", args[1])
		}}
		var addrs []string
		if addrs, err = r.LookupHost(ctx, args[2]); err == nil {
			fmt.Println("resolved", args[2], "to", strings.Join(addrs, " "))
		}
	default:
		err = errors.New("usage: vxnet connect ADDR | vxnet resolve SERVER NAME")
	}
	if err != nil {
		fmt.Println("vxnet:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
