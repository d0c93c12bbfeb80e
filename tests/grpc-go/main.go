// A real gRPC server for herd's tests and benchmarks: grpc-go's helloworld greeter and echo
// services (their generated code from google.golang.org/grpc/examples), with server
// reflection, counting the calls it answers.
//
// It prints "listening PORT" and then "admin PORT" on stdout, answers GET /count on the admin
// port with the counts as JSON ({"calls":N,"methods":{"/helloworld.Greeter/SayHello":N,...}}),
// and prints the same JSON on SIGTERM or SIGINT before it exits. Built by scripts/check into
// ~/.cache/herd/go-bin/herd-grpc-go.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	ecpb "google.golang.org/grpc/examples/features/proto/echo"
	hwpb "google.golang.org/grpc/examples/helloworld/helloworld"
	"google.golang.org/grpc/reflection"
)

type counts struct {
	mu      sync.Mutex
	calls   uint64
	methods map[string]uint64
}

func (c *counts) add(method string) {
	c.mu.Lock()
	c.calls++
	c.methods[method]++
	c.mu.Unlock()
}

func (c *counts) json() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"calls": c.calls, "methods": c.methods})
	return b
}

type greeter struct {
	hwpb.UnimplementedGreeterServer
	// delay: how long each SayHello takes before it answers (-delay), so that a benchmark can
	// compare clients' latencies where the server, not the clients, sets them.
	delay time.Duration
}

func (g greeter) SayHello(_ context.Context, in *hwpb.HelloRequest) (*hwpb.HelloReply, error) {
	if g.delay > 0 {
		time.Sleep(g.delay)
	}
	return &hwpb.HelloReply{Message: "Hello " + in.GetName()}, nil
}

type echo struct {
	ecpb.UnimplementedEchoServer
	streamCount    int
	streamInterval time.Duration
}

func (echo) UnaryEcho(_ context.Context, in *ecpb.EchoRequest) (*ecpb.EchoResponse, error) {
	return &ecpb.EchoResponse{Message: in.GetMessage()}, nil
}

// ServerStreamingEcho answers with -stream-count messages, -stream-interval apart, the first
// at once; each at its own deadline from the call's start, so the gaps do not drift.
func (e echo) ServerStreamingEcho(in *ecpb.EchoRequest, stream ecpb.Echo_ServerStreamingEchoServer) error {
	start := time.Now()
	for i := 0; i < e.streamCount; i++ {
		if wait := time.Until(start.Add(time.Duration(i) * e.streamInterval)); wait > 0 {
			time.Sleep(wait)
		}
		if err := stream.Send(&ecpb.EchoResponse{Message: in.GetMessage()}); err != nil {
			return err
		}
	}
	return nil
}

func (echo) ClientStreamingEcho(stream ecpb.Echo_ClientStreamingEchoServer) error {
	last := ""
	for {
		in, err := stream.Recv()
		if err == io.EOF {
			return stream.SendAndClose(&ecpb.EchoResponse{Message: last})
		}
		if err != nil {
			return err
		}
		last = in.GetMessage()
	}
}

func (echo) BidirectionalStreamingEcho(stream ecpb.Echo_BidirectionalStreamingEchoServer) error {
	for {
		in, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&ecpb.EchoResponse{Message: in.GetMessage()}); err != nil {
			return err
		}
	}
}

func main() {
	addr := flag.String("listen", "127.0.0.1:0", "gRPC address")
	admin := flag.String("admin", "127.0.0.1:0", "address of GET /count")
	streamCount := flag.Int("stream-count", 10, "messages of a ServerStreamingEcho call")
	streamInterval := flag.Duration("stream-interval", 0, "time between them")
	delay := flag.Duration("delay", 0, "how long each SayHello takes before it answers")
	flag.Parse()

	c := &counts{methods: map[string]uint64{}}
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		c.add(info.FullMethod)
		return h(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		c.add(info.FullMethod)
		return h(srv, ss)
	}
	s := grpc.NewServer(grpc.UnaryInterceptor(unary), grpc.StreamInterceptor(stream))
	hwpb.RegisterGreeterServer(s, greeter{delay: *delay})
	ecpb.RegisterEchoServer(s, echo{streamCount: *streamCount, streamInterval: *streamInterval})
	reflection.Register(s)

	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "herd-grpc-go:", err)
		os.Exit(1)
	}
	alis, err := net.Listen("tcp", *admin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "herd-grpc-go:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/count", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(c.json())
	})
	go http.Serve(alis, mux)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		s.Stop()
	}()
	fmt.Printf("listening %d\nadmin %d\n", lis.Addr().(*net.TCPAddr).Port, alis.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	_ = s.Serve(lis)
	fmt.Println(string(c.json()))
}
