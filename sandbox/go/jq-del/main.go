// Command jq-del removes the paths selected by jq expressions from a JSON document, the way Argo CD
// applies ignoreDifferences.jqPathExpressions (it deletes what each expression selects before diffing).
// It uses the gojq library (github.com/itchyny/gojq), a pure-Go jq.
//
//	echo '{"spec":{...}}' | jq-del '.spec.replicas' '.spec.template.spec.containers[] | select(.name == "x") | .image'
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/itchyny/gojq"
)

func main() {
	in, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<20))
	if err != nil {
		fail("read: %v", err)
	}
	var doc any
	if err := json.Unmarshal(in, &doc); err != nil {
		fail("input is not JSON: %v", err)
	}
	for _, expr := range os.Args[1:] {
		q, err := gojq.Parse(fmt.Sprintf("del(%s)", expr))
		if err != nil {
			fail("jq expression %q: %v", expr, err)
		}
		iter := q.Run(doc)
		v, ok := iter.Next()
		if !ok {
			continue
		}
		if e, isErr := v.(error); isErr {
			fail("jq expression %q: %v", expr, e)
		}
		doc = v
	}
	out, _ := json.Marshal(doc)
	os.Stdout.Write(out)
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(1)
}
