// Command emissary wraps the process of a step pod's container so that the pod can report its
// own outputs without talking to the Kubernetes API.
//
// It is copied into a shared emptyDir by the pod's init container and becomes the entrypoint of
// the main container and of every user sidecar. It must run in arbitrary images, so it is a
// static Go binary with no dependency beyond the standard library.
//
//	emissary -- CMD ARGS...            main mode: run CMD, tee its stdout, record exit code and
//	                                   output files, then mark the main container done
//	emissary --sidecar -- CMD ARGS...  sidecar mode: run CMD until the main container is done
//
// In a container set (PLUGFLOW_SET_NAME is set; set_mode.go) each member waits for the members
// it depends on; the member named main then runs in main mode, the others as set members.
//
// Files in the shared directory (PLUGFLOW_VAR_DIR, default /var/run/plugflow):
//
//	script          the script source (env PLUGFLOW_SCRIPT), written before CMD starts
//	stdout          a copy of CMD's standard output (becomes outputs.result)
//	outputs/NAME    a copy of each declared output parameter file (env PLUGFLOW_OUTPUTS)
//	outputs/NAME.error  why NAME could not be copied
//	main.alive      touched every few seconds while the main container runs (a heartbeat)
//	main.exitcode   CMD's exit code, written before main.done
//	main.done       created last: the main container has finished and everything above is final
package main

import (
	"fmt"
	"os"
)

func main() {
	opts, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
		fmt.Fprintln(os.Stderr, "usage: emissary [--sidecar] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	dir := os.Getenv("PLUGFLOW_VAR_DIR")
	if dir == "" {
		dir = defaultVarDir
	}
	if opts.sidecar {
		os.Exit(runSidecar(dir, opts.argv))
	}
	member, inSet, err := setFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
		os.Exit(2)
	}
	if inSet && member.name != "main" {
		os.Exit(runSetMember(dir, member, opts.argv))
	}
	os.Exit(runMain(dir, opts.argv))
}

const defaultVarDir = "/var/run/plugflow"

type options struct {
	sidecar bool
	argv    []string
}

// parseArgs accepts flags before a mandatory "--"; everything after it is the command line,
// passed through untouched (the kubelet has already expanded $(VAR) references in it).
func parseArgs(args []string) (options, error) {
	var o options
	for i, a := range args {
		switch a {
		case "--sidecar":
			o.sidecar = true
		case "--":
			o.argv = args[i+1:]
			if len(o.argv) == 0 {
				return o, fmt.Errorf("no command after --")
			}
			return o, nil
		default:
			return o, fmt.Errorf("unknown argument %q before --", a)
		}
	}
	return o, fmt.Errorf("missing -- before the command")
}
