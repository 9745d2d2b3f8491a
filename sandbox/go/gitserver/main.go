// Command gitserver serves bare git repositories over smart HTTP on loopback
// by running git's own `git http-backend` through Go's net/http/cgi.
//
// It is our code, not an imitation of git: every byte of the protocol is
// produced by git itself. Extras for fault injection in tests:
//
//	POST /-/offline  -> every repository request answers 503 until /-/online
//	POST /-/online
//	GET  /-/healthz
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
)

func main() {
	root := flag.String("root", "", "directory holding bare repositories (name.git)")
	addr := flag.String("listen", "127.0.0.1:0", "listen address (loopback only)")
	portFile := flag.String("port-file", "", "write the chosen port here")
	flag.Parse()
	if *root == "" {
		log.Fatal("--root is required")
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		log.Fatalf("refusing to listen on %q: loopback only", *addr)
	}
	gitExec, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		log.Fatalf("git --exec-path: %v", err)
	}
	backend := strings.TrimSpace(string(gitExec)) + "/git-http-backend"
	var offline atomic.Bool
	h := &cgi.Handler{
		Path: backend,
		Root: "/",
		Env: []string{
			"GIT_PROJECT_ROOT=" + *root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_HTTP_RECEIVE_PACK=1",
			"REMOTE_USER=sandbox",
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/-/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/-/offline", func(w http.ResponseWriter, r *http.Request) { offline.Store(true); fmt.Fprintln(w, "offline") })
	mux.HandleFunc("/-/online", func(w http.ResponseWriter, r *http.Request) { offline.Store(false); fmt.Fprintln(w, "online") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if offline.Load() {
			http.Error(w, "git server offline (fault injection)", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if *portFile != "" {
		if err := os.WriteFile(*portFile, []byte(fmt.Sprint(port)), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	log.Printf("serving %s on %s", *root, ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
