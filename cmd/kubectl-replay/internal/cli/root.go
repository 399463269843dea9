// Package cli is `kubectl replay`: the operator's workflow around a
// ReplayRequest from one command (create, plan, approve, reject, undo,
// describe, history), through client-go's kubeconfig loading and kubectl's
// own --namespace, --context and --kubeconfig flags (k8s.io/cli-runtime).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// Version is the plugin's version, printed by --version.
var Version = "dev"

// app is one invocation: its flags, streams and, once asked for, client.
type app struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	c       client.WithWatch
	ns      string
	// ran is set once a verb starts (flags and arguments accepted).
	ran bool
}

// Run runs the plugin with args (without the program name) and returns
// its exit code. Errors go to streams.ErrOut.
func Run(ctx context.Context, args []string, streams genericiooptions.IOStreams) exit.Code {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &app{flags: genericclioptions.NewConfigFlags(true), streams: streams}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exit.OK
	}
	if ctx.Err() != nil && !errors.Is(err, errTimeout) && exit.CodeOf(err) != exit.Timeout {
		// Interrupted (Ctrl-C, SIGTERM) in whatever call was under way:
		// that is the outcome, even where the call's error already had a
		// code (an API call cut off mid-answer is not the API server's
		// error).
		err = &exit.Error{Code: exit.Interrupted, Err: err}
	}
	code := exit.CodeOf(err)
	if !isUsage(err) && code == exit.APIError {
		code = exit.CodeOf(apiError(err))
		err = apiError(err)
	}
	if isUsage(err) || !a.ran {
		// Cobra's own errors (an unknown verb, a flag it could not parse,
		// wrong arguments) come before any verb ran: nothing was sent.
		code = exit.Usage
	}
	// The API server's and the request's words may hold what a tenant
	// wrote: never raw onto a terminal.
	fmt.Fprintf(streams.ErrOut, "error: %s\n", render.CleanLines(err.Error()))
	if code == exit.Usage {
		fmt.Fprintf(streams.ErrOut, "See '%s --help'.\n", strings.TrimSpace("kubectl replay "+commandPath(root, args)))
	}
	return code
}

// usageError marks cobra's own argument and flag errors.
type usageError struct{ error }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

func commandPath(root *cobra.Command, args []string) string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root {
		return ""
	}
	return strings.TrimPrefix(cmd.CommandPath(), root.DisplayName()+" ")
}

const rootLong = `kubectl replay moves a Kafka consumer group's committed offsets through a
ReplayRequest, the launcher's one-shot, audited operation: create one, follow
it, review and approve its plan, undo it, and read a group's history.

Exit codes (every verb):
`

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "replay",
		Version:       Version,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl replay"},
		Short:         "Replay a Kafka consumer group: create, review, approve, undo and audit ReplayRequests",
		Long:          rootLong + exit.Table(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Example: `  # Rewind group orders-service by two hours, and follow it to the end
  kubectl replay create orders-rewind --bootstrap-servers kafka:9092 \
    --group orders-service --topic orders --to ago:2h --wait

  # Plan first, approve after a review
  kubectl replay create orders-rewind --approval Manual ... --wait
  kubectl replay plan orders-rewind
  kubectl replay approve orders-rewind

  # Undo it, and see what every run of the group did
  kubectl replay undo orders-rewind --wait
  kubectl replay history --group orders-service`,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentPreRun = func(*cobra.Command, []string) { a.ran = true }
	a.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(a.createCommand(), a.planCommand(), a.approveCommand(), a.rejectCommand(),
		a.undoCommand(), a.describeCommand(), a.historyCommand(), a.groupsCommand())
	return root
}

// args checks a verb's positional arguments as a usage error.
func exactlyOneName(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageError{fmt.Errorf("%s takes exactly one NAME, the ReplayRequest's; got %d arguments", cmd.Name(), len(args))}
	}
	return nil
}

// client connects on first use, so that --help and usage errors never
// need a kubeconfig.
func (a *app) client() (client.WithWatch, string, error) {
	if a.c != nil {
		return a.c, a.ns, nil
	}
	cfg, err := a.flags.ToRESTConfig()
	if err != nil {
		return nil, "", exit.With(exit.APIError, fmt.Errorf("kubeconfig: %w", err))
	}
	ns, _, err := a.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", exit.With(exit.APIError, fmt.Errorf("kubeconfig: %w", err))
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return nil, "", exit.With(exit.APIError, err)
	}
	a.c, a.ns = c, ns
	return c, ns, nil
}

// newScheme has the kinds the plugin reads, Kubernetes' own and
// kafka-replay's, as launcher.NewScheme has them: the plugin does not link
// the launcher (its manager, cache and metrics server) for three lines.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

// apiError gives an API server error its exit code, and a sentence.
func apiError(err error) error {
	var e *exit.Error
	if errors.As(err, &e) && e.Code != exit.APIError {
		return err
	}
	switch {
	case apierrors.IsNotFound(err):
		return exit.With(exit.NotFound, err)
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return exit.With(exit.Forbidden, err)
	}
	return exit.With(exit.APIError, err)
}

// notFound says which request is missing, where.
func notFound(err error, what, name, ns string) error {
	if apierrors.IsNotFound(err) {
		return exit.Errorf(exit.NotFound, "%s %q not found in namespace %q", what, name, ns)
	}
	return apiError(err)
}

// palette is colour on a terminal only (and never with NO_COLOR).
func palette(w io.Writer) render.Palette {
	return render.Palette{On: isTerminal(w) && os.Getenv("NO_COLOR") == ""}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
