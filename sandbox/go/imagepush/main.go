// imagepush builds tiny, deterministic OCI images and pushes them to the
// sandbox registry with go-containerregistry.
//
//	imagepush push  --registry 127.0.0.1:5000 repo:tag...      build + push, one JSON line per image
//	imagepush digest repo:tag...                               print the digests without pushing
//	imagepush tag   --registry 127.0.0.1:5000 repo:tag repo:src point repo:tag at repo:src's manifest
//
// An image's single layer holds /etc/sandbox-image (its repository and tag)
// as an uncompressed tar with fixed times and owners, and its config has a
// zero creation time, so the same repo:tag always has the same digest on
// every machine: the seed repo can pin real digests as constants.
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type result struct {
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
}

func image(repoTag string) (v1.Image, error) {
	repo, tag, ok := strings.Cut(repoTag, ":")
	if !ok || repo == "" || tag == "" {
		return nil, fmt.Errorf("want repo:tag, got %q", repoTag)
	}
	content := []byte(fmt.Sprintf("repository=%s\ntag=%s\nnote=sandbox image, never run\n", repo, tag))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeDir, Name: "etc/", Mode: 0o755, ModTime: epoch, Format: tar.FormatUSTAR},
		{Typeflag: tar.TypeReg, Name: "etc/sandbox-image", Mode: 0o644, Size: int64(len(content)), ModTime: epoch, Format: tar.FormatUSTAR},
	} {
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(content); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer := static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer)
	img, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer:   layer,
		History: v1.History{CreatedBy: "gitops-console sandbox imagepush", Created: v1.Time{Time: epoch}},
	})
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":   repo,
		"org.opencontainers.image.version": tag,
		"dev.gitops-console.sandbox":       "simulation",
	}
	cf.Config.Env = []string{"IMAGE_VERSION=" + tag}
	cf.Config.Cmd = []string{"/bin/false"}
	return mutate.ConfigFile(img, cf)
}

func emit(ref string, d v1.Hash) {
	b, _ := json.Marshal(result{Ref: ref, Digest: d.String()})
	fmt.Println(string(b))
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: imagepush push|digest|tag ...")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	registry := fs.String("registry", "", "registry host:port (plain HTTP on loopback)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	opts := []remote.Option{remote.WithContext(ctx)}
	ref := func(s string) (name.Reference, error) {
		if *registry == "" {
			return nil, errors.New("--registry is required")
		}
		return name.ParseReference(*registry+"/"+s, name.Insecure)
	}
	switch args[0] {
	case "digest", "push":
		for _, rt := range fs.Args() {
			img, err := image(rt)
			if err != nil {
				return err
			}
			d, err := img.Digest()
			if err != nil {
				return err
			}
			if args[0] == "push" {
				r, err := ref(rt)
				if err != nil {
					return err
				}
				if err := remote.Write(r, img, opts...); err != nil {
					return fmt.Errorf("push %s: %w", r, err)
				}
			}
			emit(rt, d)
		}
	case "tag":
		if fs.NArg() != 2 {
			return errors.New("usage: imagepush tag --registry R repo:tag repo:source-tag")
		}
		dst, err := ref(fs.Arg(0))
		if err != nil {
			return err
		}
		src, err := ref(fs.Arg(1))
		if err != nil {
			return err
		}
		desc, err := remote.Get(src, opts...)
		if err != nil {
			return fmt.Errorf("get %s: %w", src, err)
		}
		t, ok := dst.(name.Tag)
		if !ok {
			return fmt.Errorf("%s is not a tag", dst)
		}
		if err := remote.Tag(t, desc, opts...); err != nil {
			return fmt.Errorf("tag %s: %w", t, err)
		}
		emit(fs.Arg(0), desc.Digest)
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
	return nil
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "imagepush:", err)
		os.Exit(1)
	}
}
