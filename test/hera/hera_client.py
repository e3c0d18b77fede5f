"""The peer's Python SDK (Hera), unchanged, against plugflow's server: what test/hera-client.test.ts runs.

Steps and DAG workflows with parameters are created and waited for, listed, their logs read; a
WorkflowTemplate and a CronWorkflow are created and a workflow submitted from each. Each check
prints one line `ok <what>`; the first failure raises (exit code 1, with the traceback).

Environment: PLUGFLOW_SERVER (https://host:port), PLUGFLOW_TOKEN, PLUGFLOW_NAMESPACE.
"""
import json
import os
import sys
import time

import requests

from hera.shared import global_config
from hera.workflows import DAG, Container, CronWorkflow, Parameter, Steps, Workflow, WorkflowsService, WorkflowTemplate
from hera.workflows.models import SubmitOpts, WorkflowSubmitRequest

ns = os.environ["PLUGFLOW_NAMESPACE"]
global_config.host = os.environ["PLUGFLOW_SERVER"]
global_config.token = os.environ["PLUGFLOW_TOKEN"]
global_config.verify_ssl = False
global_config.namespace = ns


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print(f"ok {what}", flush=True)


def echo():
    return Container(
        name="echo",
        image="alpine:3.20",
        command=["sh", "-c"],
        args=["echo hello {{inputs.parameters.who}}"],
        inputs=[Parameter(name="who")],
    )


def wait(service, name, timeout=180):
    """The workflow once it has finished (Hera's own wait polls the same GET)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        wf = service.get_workflow(name, namespace=ns)
        if wf.status and wf.status.phase in ("Succeeded", "Failed", "Error"):
            return wf
        time.sleep(1)
    raise AssertionError(f"workflow {name} did not finish in {timeout} s")


service = WorkflowsService()

with Workflow(name="hera-steps", entrypoint="main", namespace=ns, arguments={"who": "steps"}) as steps_wf:
    e = echo()
    with Steps(name="main"):
        e(arguments={"who": "{{workflow.parameters.who}}"})
steps_wf.create()
done = steps_wf.wait(poll_interval=1)
check(done.status.phase == "Succeeded", "a Steps workflow with a parameter created and waited for (Workflow.wait)")

with Workflow(name="hera-dag", entrypoint="d", namespace=ns) as dag_wf:
    e = echo()
    with DAG(name="d"):
        a = e(name="a", arguments={"who": "a"})
        b = e(name="b", arguments={"who": "b"})
        a >> b
dag_wf.create()
done = wait(service, "hera-dag")
check(done.status.phase == "Succeeded", "a DAG workflow a >> b succeeded")
nodes = [n.display_name for n in done.status.nodes.values()]
check("a" in nodes and "b" in nodes, "the DAG's nodes a and b are in its status")

listed = service.list_workflows(namespace=ns)
names = [w.metadata.name for w in listed.items]
check("hera-steps" in names and "hera-dag" in names, "list_workflows lists both")

# Hera's workflow_logs decodes the reply as one JSON object, so (against the peer's server as
# well) it can read a log of one line only: grep makes it one, and the call must not fail.
service.workflow_logs("hera-dag", namespace=ns, container="main", grep="hello b")
check(True, "workflow_logs answers (one line, with grep)")
# The whole log, as newline-delimited {"result": …} lines (what the peer's server sends a client
# that does not ask for server-sent events), read with Hera's own host, token and TLS settings.
reply = requests.get(
    f"{global_config.host}/api/v1/workflows/{ns}/hera-dag/log",
    params={"logOptions.container": "main"},
    headers={"Authorization": f"Bearer {global_config.token}"},
    verify=global_config.verify_ssl,
    timeout=60,
)
lines = [json.loads(line)["result"]["content"] for line in reply.text.splitlines() if line.strip()]
check(reply.ok and "hello a" in lines and "hello b" in lines, "the workflow's log route answers every pod's lines as JSON lines")

with WorkflowTemplate(name="hera-template", entrypoint="main", namespace=ns, arguments={"who": "template"}) as wt:
    e = echo()
    with Steps(name="main"):
        e(arguments={"who": "{{workflow.parameters.who}}"})
wt.create()
check(service.get_workflow_template("hera-template", namespace=ns).metadata.name == "hera-template", "a WorkflowTemplate created")
submitted = service.submit_workflow(
    WorkflowSubmitRequest(
        namespace=ns,
        resource_kind="WorkflowTemplate",
        resource_name="hera-template",
        submit_options=SubmitOpts(parameters=["who=submitted"]),
    ),
    namespace=ns,
)
done = wait(service, submitted.metadata.name)
check(done.status.phase == "Succeeded", "a workflow submitted from the WorkflowTemplate succeeded")

with CronWorkflow(name="hera-cron", schedule="0 3 * * *", entrypoint="main", namespace=ns, arguments={"who": "cron"}) as cw:
    e = echo()
    with Steps(name="main"):
        e(arguments={"who": "{{workflow.parameters.who}}"})
cw.create()
check(service.get_cron_workflow("hera-cron", namespace=ns).metadata.name == "hera-cron", "a CronWorkflow created")
submitted = service.submit_workflow(
    WorkflowSubmitRequest(namespace=ns, resource_kind="CronWorkflow", resource_name="hera-cron"),
    namespace=ns,
)
done = wait(service, submitted.metadata.name)
check(done.status.phase == "Succeeded", "a workflow submitted from the CronWorkflow succeeded")
print("all ok", flush=True)
sys.exit(0)
