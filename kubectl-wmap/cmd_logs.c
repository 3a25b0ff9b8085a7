/* kubectl-wmap logs: the logs of a live workload's pods, or of one component's
 * (live_logs.c does the work). */
#include "cli.h"
#include "live.h"

static const cli_flag flags[] = {
	{ "container", NULL, 'c', "CONTAINER", "only this container of each pod (default: every container)" },
	{ "follow", NULL, 'f', NULL, "follow every pod's log, and pods that appear (Ctrl-C ends)" },
	{ "tail", NULL, 0, "N", "the last N lines of each container (default: all)" },
	{ "since", NULL, 0, "DURATION", "only lines newer than DURATION (30s, 5m, 2h)" },
	{ "previous", NULL, 'p', NULL, "the log of each container's previous run (after a restart)" },
	{ "timestamps", NULL, 0, NULL, "each line with the time it was written" },
	{ "max-pods", NULL, 0, "N", "refuse more than N pods (default 50)" },
	{ NULL, NULL, 0, NULL, NULL },
};

static int run(const cli_options *o)
{
	if (cli_require_table(o, &cli_cmd_logs) != 0)
		return CLI_EXIT_USAGE;
	return live_logs(o);
}

const cli_command cli_cmd_logs = {
	.name = "logs",
	.summary = "Print the logs of a live workload's pods, or of one component's",
	.usage = "logs TYPE/NAME [COMPONENT[/INSTANCE]] [-c CONTAINER] [-f] [--tail N] "
		 "[--since DURATION] [--previous] [--max-pods N]",
	.help =
		"Prints the logs of the pods of a workload (the pods describe shows), or of one\n"
		"component (replicatedjob) or instance (replicatedjob/leader, a Ray worker group).\n"
		"Each line starts with its pod, and its container when the pod has several;\n"
		"on a terminal each pod has its colour (NO_COLOR=1 turns colours off).\n"
		"Without -f, containers are read one after the other, pods in name order; with\n"
		"-f every container is followed at once, and so are the pods that appear.\n"
		"Containers that have not started are named on stderr and skipped.\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap logs jobset/train replicatedjob/leader\n"
		"  kubectl wmap logs raycluster/demo worker/gpu-group -f --tail 20\n"
		"  kubectl wmap logs pytorchjob train -c pytorch --since 10m\n"
		"\n"
		"Exit codes: 0 ok, 1 error (a log could not be read, cluster errors), 2 usage,\n"
		"3 not found (the workload, or its COMPONENT), 4 no definition covers the type,\n"
		"5 more pods than --max-pods; -f: 130 on Ctrl-C.\n",
	.flags = flags,
	.run = run,
};
