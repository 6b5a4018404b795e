import { PDK_PRELUDE } from './plugins.js';

/**
 * AssemblyScript sources of the plugins the tests build: a well-behaved context plugin that calls
 * its vendor over HTTP, and hostile entrypoints (endless loop, huge allocation, forbidden host,
 * trap, a redirect to a forbidden place).
 */
export const HTTP_HELPERS = `
import { Memory } from "@extism/as-pdk";
@external("extism:host/env", "http_request") declare function http_request(req: u64, body: u64): u64;
@external("extism:host/env", "http_status_code") declare function http_status_code(): i32;
@external("extism:host/env", "length") declare function extism_length(offset: u64): u64;
function httpGet(url: string): string {
  const req = Memory.allocateString('{"method":"GET","url":"' + url + '","headers":{}}');
  const off = http_request(req.offset, 0);
  if (off == 0) return "";
  return new Memory(off, extism_length(off)).toString();
}
function cfg(key: string): string { const v = Config.get(key); return v === null ? "" : v as string; }
function out(s: string): void { Host.output(Uint8Array.wrap(String.UTF8.encode(s))); }
function quote(s: string): string { return '"' + s.replaceAll('\\\\', '\\\\\\\\').replaceAll('"', '\\\\"').replaceAll("\\n", " ") + '"'; }
`;

export const CONTEXT_PLUGIN = `${PDK_PRELUDE}${HTTP_HELPERS}
export function fetch_context(): i32 {
  const input = Host.inputString();
  const body = httpGet(cfg("base_url") + "/issue");
  out('{"title":"Tracker","fields":[{"label":"vendor","value":' + quote(body) + '},{"label":"status","value":"' + http_status_code().toString() + '"},{"label":"input","value":' + quote(input) + '},{"label":"api_key","value":' + quote(cfg("api_key")) + '},{"label":"hidden","value":' + quote(cfg("hidden")) + '}],"actions":[{"id":"open","label":"Open","kind":"open_url","url":"https://tracker.example/1"}],"checklist":[{"id":"c1","name":"Check","completed":true}]}');
  return 0;
}
export function toggle_item(): i32 { out('{"summary":"toggled"}'); return 0; }
export function list_projects(): i32 { out('{"options":[{"value":"p1","label":"Project 1"}],"input":' + Host.inputString() + '}'); return 0; }
export function create_issue(): i32 { out('{"key":"TRK-7","title":"Created","status":"open","assignee":"","priority":"","url":"https://tracker.example/TRK-7"}'); return 0; }
// A 64-bit counter: wrapping a 32-bit one back to -5 took only ~4 billion steps, which an idle
// machine finishes inside the test's 2 s limit, so the "endless" loop answered.
export function spin(): i32 { let x: i64 = 0; while (true) { x++; if (x == -5) break; } return <i32>x; }
export function hog(): i32 { const keep = new Array<Uint8Array>(); for (let i = 0; i < 4096; i++) { const a = new Uint8Array(1 << 20); a[0] = 1; keep.push(a); } out('{"summary":"' + keep.length.toString() + '"}'); return 0; }
export function trap(): i32 { unreachable(); return 0; }
export function forbidden(): i32 { const body = httpGet(cfg("forbidden_url")); out('{"summary":' + quote(body) + '}'); return 0; }
export function redirect(): i32 { const body = httpGet(cfg("base_url") + "/redirect"); out('{"summary":"' + http_status_code().toString() + '","body":' + quote(body) + '}'); return 0; }
export function not_json(): i32 { out("this is not json"); return 0; }
`;

export const CONTEXT_ENTRYPOINTS = ['fetch_context', 'toggle_item', 'list_projects', 'create_issue', 'spin', 'hog', 'trap', 'forbidden', 'redirect', 'not_json'];

/** Storage file requests and chat-ops: answers that echo their input; "fail" in a title or note body traps. */
export const SERVICE_PLUGIN = `${PDK_PRELUDE}${HTTP_HELPERS}
export function fetch_context(): i32 { out('{"title":"Service"}'); return 0; }
export function create_file_request(): i32 {
  const input = Host.inputString();
  if (input.includes('"title":"fail')) unreachable();
  out('{"url":"https://files.example/r/tok-123","token":"tok-123","expires_at":"2026-12-01T00:00:00Z","input":' + input + '}');
  return 0;
}
export function open_thread(): i32 {
  const input = Host.inputString();
  out('{"thread_id":"th-1","url":"https://chat.example/th-1","input":' + input + '}');
  return 0;
}
export function post_thread_note(): i32 {
  const input = Host.inputString();
  if (input.includes('"body":"fail')) unreachable();
  out('{"id":"msg-1","input":' + input + '}');
  return 0;
}
`;
export const SERVICE_ENTRYPOINTS = ['fetch_context', 'create_file_request', 'open_thread', 'post_thread_note'];

/** A webhook relay: handshake, shared-secret check, a retry request, a failure, an echo of what it got. */
export const RELAY_PLUGIN = `${PDK_PRELUDE}
function cfg(key: string): string { const v = Config.get(key); return v === null ? "" : v as string; }
function out(s: string): void { Host.output(Uint8Array.wrap(String.UTF8.encode(s))); }
function between(s: string, start: string, end: string): string {
  const i = s.indexOf(start);
  if (i < 0) return "";
  const j = s.indexOf(end, i + start.length);
  return j < 0 ? "" : s.substring(i + start.length, j);
}
export function webhook_receive(): i32 {
  const input = Host.inputString();
  if (input.includes('"method":"GET"')) {
    const challenge = between(input, '"challenge":"', '"');
    out('{"status":200,"headers":{"content-type":"text/plain"},"body":"' + (challenge.length > 0 ? challenge : "ready") + '"}');
    return 0;
  }
  if (!input.includes('"x-signature":"' + cfg("webhook_secret") + '"') || cfg("webhook_secret").length == 0) { out('{"status":401}'); return 0; }
  if (input.includes('"body_base64":"cmV0cnk="')) { out('{"status":503,"headers":{"retry-after":"30"}}'); return 0; }
  if (input.includes('"body_base64":"Ym9vbQ=="')) { unreachable(); }
  out('{"status":202,"body":{"received":true,"input":' + input + '}}');
  return 0;
}
`;
