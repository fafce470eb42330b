// The generated-client check's TypeScript program: it uses only the types openapi-typescript
// generates from spec/openapi.yaml (schema.d.ts, written beside this file by the test) with
// openapi-fetch, and runs a short flow against a running service: balance, voices, estimate,
// submit, wait, a generation.completed delivery narrowed on its discriminator, and an error answer
// decoded through the generated types.
//
// Usage: node out/flow.js BASE_URL API_KEY
import { createServer } from "node:http";
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type ErrorCode = components["schemas"]["ErrorCode"];
type GenerationStatus = components["schemas"]["GenerationStatus"];
type WebhookEvent = components["schemas"]["WebhookEvent"];

// dispatch narrows a delivery on its discriminator and answers what it is about.
function dispatch(ev: WebhookEvent): string {
  switch (ev.type) {
    case "generation.completed":
    case "generation.failed":
      return `${ev.type} for ${ev.data.generation_id}`;
    case "batch.settled":
      return `${ev.type} for ${ev.data.batch_group_id}`;
    case "workflow_run.completed":
    case "workflow_run.failed":
      return `${ev.type} for ${ev.data.workflow_run_id}`;
    case "credits.low":
      return `${ev.type}: ${ev.data.available_credits} left`;
    case "webhook.test":
      return `${ev.type} for ${ev.data.webhook_id}`;
  }
}

// receiver listens on 127.0.0.1 for one delivery and resolves with its parsed body.
function receiver(): Promise<{ url: string; next: Promise<WebhookEvent>; close: () => void }> {
  return new Promise((ready) => {
    let deliver: (ev: WebhookEvent) => void = () => {};
    const next = new Promise<WebhookEvent>((r) => (deliver = r));
    const server = createServer((req, res) => {
      const chunks: Uint8Array[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        res.writeHead(204).end();
        const text = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => Array.from(c))));
        deliver(JSON.parse(text) as WebhookEvent);
      });
    });
    server.listen(0, "127.0.0.1", () =>
      ready({ url: `http://127.0.0.1:${server.address().port}/hooks`, next, close: () => server.close() }),
    );
  });
}

async function main(base: string, key: string): Promise<void> {
  const client = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${key}` } });

  const bal = await client.GET("/credits/balance");
  if (!bal.data) throw new Error(`balance: ${bal.response.status}`);
  console.log(`balance: ${bal.data.available_credits} credits available`);

  const voices = await client.GET("/voices", { params: { query: { limit: 1 } } });
  const voice = voices.data?.voices[0]?.voice_id;
  if (!voice) throw new Error(`voices: ${voices.response.status}`);

  const hooks = await receiver();
  const hook = await client.POST("/webhooks", { body: { url: hooks.url, events: ["generation.completed"] } });
  if (!hook.data) throw new Error(`webhook: ${hook.response.status} ${JSON.stringify(hook.error)}`);

  const config = { script: "Meet the bottle that keeps coffee hot for 12 hours." };
  const est = await client.POST("/estimates", { body: { capability_id: "tts", config, voice_id: voice } });
  if (!est.data) throw new Error(`estimate: ${est.response.status} ${JSON.stringify(est.error)}`);
  const credits: number = est.data.credits;
  console.log(`estimate: ${credits} credits, submit with max_credits ${est.data.max_credits_needed}`);

  const sub = await client.POST("/generations", {
    body: { capability_id: "tts", config, voice_id: voice, max_credits: est.data.max_credits_needed },
  });
  if (!sub.data) throw new Error(`submit: ${sub.response.status} ${JSON.stringify(sub.error)}`);
  const id = sub.data.generation_id;
  console.log(`submit: ${id}, ${sub.data.credits.credits_held} credits held`);

  let status: GenerationStatus | undefined;
  for (let i = 0; i < 100 && status === undefined; i++) {
    const w = await client.GET("/generations/{id}/wait", { params: { path: { id } } });
    if (!w.data) throw new Error(`wait: ${w.response.status}`);
    if (!w.data.still_running) {
      status = w.data.generation.status;
      const kind: components["schemas"]["OutputKind"] | null = w.data.generation.output_kind;
      console.log(`wait: ${status} ${kind}, ${w.data.generation.outputs.length} output(s)`);
    }
  }
  if (status !== "completed") throw new Error(`wait: finished as ${status}`);

  const ev = await hooks.next;
  hooks.close();
  if (ev.type !== "generation.completed" || ev.data.generation_id !== id) throw new Error(`event: ${dispatch(ev)}`);
  console.log(`event: ${dispatch(ev)} (delivery ${ev.id})`);

  const nf = await client.GET("/generations/{id}", { params: { path: { id: "gen_" + "0".repeat(32) } } });
  const code: ErrorCode | undefined = nf.error?.error.code;
  if (nf.response.status !== 404 || code !== "not_found") throw new Error(`error answer: ${nf.response.status} ${code}`);
  console.log(`error: ${nf.response.status} ${code} (retryable ${nf.error?.error.retryable})`);
  console.log("ts flow: ok");
}

const [base, key] = process.argv.slice(2);
main(base ?? "", key ?? "").catch((e: unknown) => {
  console.error("tsflow:", e);
  process.exitCode = 1;
});
