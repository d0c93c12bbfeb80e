// A fast WebSocket echo server for bench/bench_ws.py (gorilla/websocket): each message back as
// it came, on a free loopback port printed first ("listening PORT").
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{
	ReadBufferSize:  4096,
	WriteBufferSize: 4096,
	CheckOrigin:     func(*http.Request) bool { return true },
}

func echo(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	for {
		kind, message, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(kind, message); err != nil {
			return
		}
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
	if err := http.Serve(ln, http.HandlerFunc(echo)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
