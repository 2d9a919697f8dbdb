// Command delayproxy puts a network's latency between a client and a server on one machine: it
// listens on 127.0.0.1:PORT, forwards every connection to TARGET (host:port) and delivers every
// chunk of data, each way, DELAY after it arrived (so a request and its answer take 2 × DELAY more
// than on loopback), without limiting the bandwidth or the chunks in flight. It prints its address
// on stdout once it listens, and runs until killed.
// Usage: go run ./stress/delayproxy TARGET DELAY [PORT=0]
package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

func main() {
	fmt.Fprintln(os.Stderr, "delayproxy:", run())
	os.Exit(1)
}

// run proxies until it fails: it answers why.
func run() error {
	if len(os.Args) < 3 {
		return fmt.Errorf("usage: delayproxy TARGET DELAY [PORT]")
	}
	target := os.Args[1]
	delay, err := time.ParseDuration(os.Args[2])
	if err != nil {
		return fmt.Errorf("delay %q: %w", os.Args[2], err)
	}
	port := 0
	if len(os.Args) > 3 {
		if port, err = strconv.Atoi(os.Args[3]); err != nil {
			return fmt.Errorf("port %q: %w", os.Args[3], err)
		}
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go serve(c, target, delay)
	}
}

// serve forwards one connection to target, each way delayed.
func serve(c net.Conn, target string, delay time.Duration) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); pipe(s, c, delay) }()
	go func() { defer wg.Done(); pipe(c, s, delay) }()
	wg.Wait()
}

// chunk is data read at a time.
type chunk struct {
	data []byte
	at   time.Time
}

// pipe copies from src to dst, each chunk delay after it was read; at src's end it closes dst's
// writing side.
func pipe(dst, src net.Conn, delay time.Duration) {
	chunks := make(chan chunk, 1024)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 64<<10)
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{data: buf[:n], at: time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range chunks {
		time.Sleep(time.Until(ch.at.Add(delay)))
		if _, err := dst.Write(ch.data); err != nil {
			break
		}
	}
	for range chunks {
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
