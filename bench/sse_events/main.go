// A fast Server-Sent Events server for bench/bench_sse.py (Go's standard library only): each
// response is `?n=N` events of 64 bytes (`data: xxx...\n\n`), written and flushed four at a
// time, as text/event-stream; `?plain=1` sends the same bytes as text/plain (what reading the
// stream as a plain body costs). It listens on a free loopback port printed first
// ("listening PORT").
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// One event: "data: " + 56 x + "\n\n" = 64 bytes.
var four = []byte(strings.Repeat("data: "+strings.Repeat("x", 56)+"\n\n", 4))

func events(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n < 4 {
		n = 1000
	}
	if r.URL.Query().Get("plain") != "" {
		w.Header().Set("Content-Type", "text/plain")
	} else {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	w.Header().Set("Cache-Control", "no-cache")
	f := w.(http.Flusher)
	for i := 0; i < n/4; i++ {
		if _, err := w.Write(four); err != nil {
			return
		}
		f.Flush()
	}
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening %d\n", ln.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	http.HandleFunc("/", events)
	if err := http.Serve(ln, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
