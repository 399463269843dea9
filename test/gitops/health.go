// Package gitops runs the ReplayRequest health checks that the chart ships
// (charts/kafka-replay/files/health) the way Argo CD and Flux run them, so
// that tests can feed them real objects: the Lua script through gopher-lua
// with the libraries and the obj global Argo CD gives it, the CEL
// healthCheckExprs through cel-go with the environment, the variables and
// the order of Flux's kustomize-controller.
package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Files are the shipped health checks, relative to the repository root.
const (
	LuaFile  = "charts/kafka-replay/files/health/replayrequest.lua"
	FluxFile = "charts/kafka-replay/files/health/replayrequest-flux.yaml"
)

// RepoRoot is the repository's root directory (this file is test/gitops/health.go).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Argo CD's health statuses (gitops-engine's health.HealthStatusCode).
const (
	Healthy     = "Healthy"
	Progressing = "Progressing"
	Degraded    = "Degraded"
	Suspended   = "Suspended"
	Missing     = "Missing"
	Unknown     = "Unknown"
)

// Health is what an Argo CD health script returns.
type Health struct {
	Status  string
	Message string
}

// invalidHealthStatus is Argo CD's message for a status it does not know.
const invalidHealthStatus = "Lua returned an invalid health status"

// ArgoHealth runs a health script the way Argo CD runs one configured in
// argocd-cm: a Lua state without the standard libraries but base, package and
// table (Argo CD also opens an os reduced to time functions, which the
// script does not use, so it is left out here: a script that needed it
// fails), the object as the global obj, one second to run, and the table the
// chunk returns read for status and message. A status Argo CD does not know
// becomes Unknown, as there.
func ArgoHealth(script string, obj map[string]any) (Health, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for name, open := range map[string]lua.LGFunction{
		lua.LoadLibName: lua.OpenPackage,
		lua.BaseLibName: lua.OpenBase,
		lua.TabLibName:  lua.OpenTable,
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(open), NRet: 0, Protect: true}, lua.LString(name)); err != nil {
			return Health{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", luaValue(l, obj))
	if err := l.DoString(script); err != nil {
		return Health{}, err
	}
	ret := l.Get(-1)
	tbl, ok := ret.(*lua.LTable)
	if !ok {
		return Health{}, fmt.Errorf("expect table output from Lua script, not %s", ret.Type())
	}
	var h Health
	for key, dst := range map[string]*string{"status": &h.Status, "message": &h.Message} {
		switch v := tbl.RawGetString(key).(type) {
		case *lua.LNilType:
		case lua.LString:
			*dst = string(v)
		default:
			// Argo CD decodes the table as JSON into strings: this fails there too.
			return Health{}, fmt.Errorf("health %s is a %s, not a string", key, v.Type())
		}
	}
	switch h.Status {
	case Healthy, Progressing, Degraded, Suspended, Missing, Unknown:
		return h, nil
	}
	return Health{Status: Unknown, Message: invalidHealthStatus}, nil
}

// luaValue converts an unstructured object to Lua values as Argo CD does:
// maps and slices to tables, integers and floats to numbers.
func luaValue(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(luaValue(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetH(lua.LString(k), luaValue(l, item))
		}
		return t
	}
	return lua.LNil
}

// Flux's kstatus results.
const (
	Current    = "Current"
	InProgress = "InProgress"
	Failed     = "Failed"
)

// FluxCheck is one entry of a Kustomization's spec.healthCheckExprs.
type FluxCheck struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	InProgress string `json:"inProgress,omitempty"`
	Failed     string `json:"failed,omitempty"`
	Current    string `json:"current"`
}

// LoadFluxChecks reads a list of healthCheckExprs entries.
func LoadFluxChecks(path string) ([]FluxCheck, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var checks []FluxCheck
	if err := yaml.UnmarshalStrict(b, &checks); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return checks, nil
}

// FluxHealth evaluates a check the way Flux's kustomize-controller does
// (fluxcd/pkg runtime/cel, RFC 0009): InProgress while
// status.observedGeneration is set and differs from metadata.generation;
// then inProgress, failed and current in that order, the first true one
// wins, none is InProgress. The expressions are parsed, not type-checked,
// in Flux's CEL environment, with the object's top-level fields as the
// variables. An evaluation error is returned: Flux does not use the result
// then and retries until the Kustomization's timeout.
func FluxHealth(check FluxCheck, obj map[string]any) (string, error) {
	if check.Current == "" {
		return "", errors.New("expression current not specified")
	}
	if observed, ok, err := unstructured.NestedInt64(obj, "status", "observedGeneration"); err != nil {
		return "", err
	} else if ok {
		generation, ok, err := unstructured.NestedInt64(obj, "metadata", "generation")
		if err != nil {
			return "", err
		}
		if ok && observed != generation {
			return InProgress, nil
		}
	}
	for _, e := range []struct{ name, expr, result string }{
		{"inProgress", check.InProgress, InProgress},
		{"failed", check.Failed, Failed},
		{"current", check.Current, Current},
	} {
		if e.expr == "" {
			continue
		}
		ok, err := evalBool(e.expr, obj)
		if err != nil {
			return "", fmt.Errorf("%s: %w", e.name, err)
		}
		if ok {
			return e.result, nil
		}
	}
	return InProgress, nil
}

// evalBool parses and runs one expression in Flux's CEL environment.
func evalBool(expr string, obj map[string]any) (bool, error) {
	env, err := cel.NewEnv(
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Sets(),
		ext.Encoders(),
	)
	if err != nil {
		return false, err
	}
	ast, issues := env.Parse(expr)
	if issues != nil && issues.Err() != nil {
		return false, fmt.Errorf("parse %q: %w", expr, issues.Err())
	}
	prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(100))
	if err != nil {
		return false, err
	}
	val, _, err := prg.ContextEval(context.Background(), obj)
	if err != nil {
		return false, fmt.Errorf("evaluate %q: %w", expr, err)
	}
	b, ok := val.(types.Bool)
	if !ok {
		return false, fmt.Errorf("%q is a %s, not a bool", expr, val.Type())
	}
	return bool(b), nil
}

// YAMLBlocks returns the ```yaml blocks of a Markdown file, in order.
func YAMLBlocks(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var blocks []string
	var cur []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```yaml":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
		case in:
			cur = append(cur, line)
		}
	}
	if in {
		return nil, fmt.Errorf("%s: a yaml block is not closed", path)
	}
	return blocks, nil
}
