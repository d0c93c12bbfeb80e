module herd/bench/ws_echo

go 1.22

require github.com/gorilla/websocket v1.5.3
