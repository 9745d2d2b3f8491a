// Command flux-render renders a Flux Kustomization exactly as kustomize-controller
// does, by calling the same library (github.com/fluxcd/pkg/kustomize): the
// generator (spec.targetNamespace, namePrefix/Suffix, commonMetadata, patches,
// images, components; a kustomization.yaml is generated when the path has none),
// a secure kustomize build (no files outside --root, no remote bases), then
// postBuild variable substitution. Variables come only from the Kustomization
// object given (spec.postBuild.substitute): the caller merges ConfigMap values
// into it; Secret values are never read.
//
//	flux-render --root DIR --path ./overlays/dev --kustomization ks.yaml > rendered.yaml
//	flux-render --serve   (renders one request a line from stdin, see serve.go)
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/fluxcd/pkg/kustomize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/yaml"
)

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(1)
}

func libVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/fluxcd/pkg/kustomize" {
				return d.Version
			}
		}
	}
	return "unknown"
}

// builder is the kustomize build of a directory inside root: the library's
// SecureBuild, or the server's build that keeps the parsed built-in schema.
type builder func(root, dir string) (resmap.ResMap, error)

func secureBuild(root, dir string) (resmap.ResMap, error) {
	return kustomize.SecureBuild(root, dir, false)
}

// render renders the Kustomization object in ksData at path inside root.
func render(root, path string, ksData []byte, build builder) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(ksData, &obj); err != nil {
		return nil, fmt.Errorf("parse kustomization: %v", err)
	}
	ks := unstructured.Unstructured{Object: obj}
	dir, err := securejoin.SecureJoin(root, path)
	if err != nil {
		return nil, fmt.Errorf("path %q: %v", path, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("kustomization path not found: %s", path)
	}
	gen := kustomize.NewGenerator(root, ks)
	action, err := gen.WriteFile(dir, kustomize.WithSaveOriginalKustomization())
	if err != nil {
		return nil, fmt.Errorf("kustomize generator: %v", err)
	}
	defer func() { _ = kustomize.CleanDirectory(dir, action) }()
	resMap, err := build(root, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %v", err)
	}
	var out bytes.Buffer
	for _, res := range resMap.Resources() {
		outRes, err := kustomize.SubstituteVariables(context.Background(), nil, ks, res, kustomize.SubstituteWithDryRun(true))
		if err != nil {
			return nil, fmt.Errorf("post-build substitution of %s/%s: %v", res.GetKind(), res.GetName(), err)
		}
		if outRes == nil {
			outRes = res
		}
		y, err := outRes.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("encode %s/%s: %v", res.GetKind(), res.GetName(), err)
		}
		fmt.Fprintf(&out, "---\n%s", y)
	}
	return out.Bytes(), nil
}

func main() {
	root := flag.String("root", "", "the extracted source artifact (nothing outside it is read)")
	path := flag.String("path", "./", "spec.path inside the artifact")
	ksFile := flag.String("kustomization", "", "the Flux Kustomization object (YAML or JSON)")
	version := flag.Bool("version", false, "print the renderer version")
	serveMode := flag.Bool("serve", false, "render requests read from stdin, one a line, until it closes")
	flag.Parse()
	if *version {
		fmt.Printf("flux-render github.com/fluxcd/pkg/kustomize@%s\n", libVersion())
		return
	}
	if *serveMode {
		if err := serve(os.Stdin, os.Stdout); err != nil && !errors.Is(err, errStdinClosed) {
			fail("serve: %v", err)
		}
		return
	}
	if *root == "" || *ksFile == "" {
		fail("--root and --kustomization are required")
	}
	data, err := os.ReadFile(*ksFile)
	if err != nil {
		fail("read kustomization: %v", err)
	}
	out, err := render(*root, *path, data, secureBuild)
	if err != nil {
		fail("%v", err)
	}
	_, _ = os.Stdout.Write(out)
}
