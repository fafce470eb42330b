// Command barehttp is the bare side of BenchmarkHTTPGetGeneration (make bench-http): a plain
// net/http server answering every request that carries the right bearer key with the very bytes
// and headers the mock answers GET /api/v1/generations/{id} with, and 401 otherwise. It does
// nothing else, so the mock's rate over its rate is what the mock's own work costs. It listens on
// a free loopback port and prints its base URL on one line once it serves.
//
//	go run ./mock/testdata/barehttp -key KEY -body answer.json
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
)

func main() {
	key := flag.String("key", "", "the bearer key to accept")
	bodyFile := flag.String("body", "", "file holding the answer's bytes")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+*key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(body)
	})))
}
