module herd/bench/sse_events

go 1.22
