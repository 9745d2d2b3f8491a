package main

// The server mode: one process renders request after request, so that kustomize's
// built-in OpenAPI schema is parsed once, not once a render. The library's
// SecureBuild resets and re-parses that schema on every build (about half of a
// one-shot render's CPU) to keep a kustomization's own `openapi:` schema from
// reaching the next build. Here a tree with no `openapi` field anywhere in its
// kustomization files is built the same way (same secure file system, options
// and panic recovery) without the reset: kustomize then leaves the global schema
// as the built-ins it parsed, so each build sees what a fresh one would. A tree
// that has such a field is built by the library's SecureBuild, reset included.
//
// Protocol: a request is one JSON line {"root","path","kustomization"} (the
// kustomization as a file path, as in the one-shot flags); the answer is one
// JSON line {"bytes":N} followed by N bytes of rendered YAML, or {"error":"…"}.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	securefs "github.com/fluxcd/pkg/kustomize/filesys"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	kustypes "sigs.k8s.io/kustomize/api/types"
)

var errStdinClosed = errors.New("stdin closed")

type request struct {
	Root          string `json:"root"`
	Path          string `json:"path"`
	Kustomization string `json:"kustomization"`
}

type answer struct {
	Bytes *int   `json:"bytes,omitempty"`
	Error string `json:"error,omitempty"`
}

func serve(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64*1024)
	w := bufio.NewWriter(out)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if err == io.EOF {
				return errStdinClosed
			}
			return err
		}
		var a answer
		var body []byte
		var req request
		if jerr := json.Unmarshal(line, &req); jerr != nil {
			a.Error = fmt.Sprintf("bad request: %v", jerr)
		} else if req.Root == "" || req.Kustomization == "" {
			a.Error = "root and kustomization are required"
		} else if data, rerr := os.ReadFile(req.Kustomization); rerr != nil {
			a.Error = fmt.Sprintf("read kustomization: %v", rerr)
		} else {
			build := keepSchemaBuild
			if hasOwnSchema(req.Root) {
				build = secureBuild
			}
			path := req.Path
			if path == "" {
				path = "./"
			}
			if body, err = render(req.Root, path, data, build); err != nil {
				a.Error = err.Error()
				body = nil
			} else {
				n := len(body)
				a.Bytes = &n
			}
		}
		head, _ := json.Marshal(a)
		if _, err := w.Write(append(head, '\n')); err != nil {
			return err
		}
		if _, err := w.Write(body); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// the kustomization file names kustomize reads (konfig.RecognizedKustomizationFileNames)
var kustomizationFile = map[string]bool{"kustomization.yaml": true, "kustomization.yml": true, "Kustomization": true}

// an `openapi` key in any kustomization file (JSON or YAML, quoted or not, at any indent: a false match only
// costs the one-shot path's re-parse)
var openapiKey = regexp.MustCompile(`(?m)^\s*["']?openapi["']?\s*:`)

// hasOwnSchema tells whether a kustomization file under root names its own OpenAPI schema (or fails to be read).
func hasOwnSchema(root string) bool {
	found := false
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !kustomizationFile[d.Name()] {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if openapiKey.Match(b) {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found || err != nil
}

// keepSchemaBuild is the library's Build (github.com/fluxcd/pkg/kustomize SecureBuild without remote bases) without
// its reset of the global OpenAPI schema: the same secure file system, options and panic recovery.
func keepSchemaBuild(root, dir string) (res resmap.ResMap, err error) {
	fs, err := securefs.MakeFsOnDiskSecure(root)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recovered from kustomize build panic: %v", r)
		}
	}()
	k := krusty.MakeKustomizer(&krusty.Options{
		LoadRestrictions: kustypes.LoadRestrictionsNone,
		PluginConfig:     kustypes.DisabledPluginConfig(),
	})
	return k.Run(fs, dir)
}
