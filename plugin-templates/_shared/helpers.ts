// Helpers every Helpdesk plugin uses: JSON in and out, configuration, and HTTP through the host.
// The host allows HTTP only to the manifest's scopes.http_hosts and never follows redirects.
import { Config, Host, Memory } from "@extism/as-pdk";
import { JSON } from "assemblyscript-json/assembly";

@external("extism:host/env", "http_request") declare function http_request(req: u64, body: u64): u64;
@external("extism:host/env", "http_status_code") declare function http_status_code(): i32;
@external("extism:host/env", "length") declare function extism_length(offset: u64): u64;
@external("extism:host/env", "error_set") declare function error_set(offset: u64): void;

/** Without this override of `abort` the module would import one the host does not provide. */
export function pluginAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  unreachable();
}

export class HttpResponse {
  constructor(public status: i32, public body: string) {}
  json(): JSON.Obj {
    const value = JSON.parse(this.body);
    return value.isObj ? <JSON.Obj>value : new JSON.Obj();
  }
}

/** One HTTP request to an allowed host. `headers` is a JSON object as text, e.g. '{"authorization":"Bearer x"}'. */
export function http(method: string, url: string, body: string = "", headers: string = "{}"): HttpResponse {
  const req = Memory.allocateString('{"method":' + q(method) + ',"url":' + q(url) + ',"headers":' + headers + "}");
  const payload = body.length > 0 ? Memory.allocateString(body).offset : 0;
  const offset = http_request(req.offset, payload);
  const text = offset == 0 ? "" : new Memory(offset, extism_length(offset)).toString();
  return new HttpResponse(http_status_code(), text);
}

/** The call's input document. */
export function input(): JSON.Obj {
  const value = JSON.parse(Host.inputString());
  return value.isObj ? <JSON.Obj>value : new JSON.Obj();
}

/** Answers a JSON document (as UTF-8 bytes: outputString would cut non-ASCII text). */
export function output(json: string): i32 {
  Host.output(Uint8Array.wrap(String.UTF8.encode(json)));
  return 0;
}

/** Fails the call with a message (the staff route answers 502 extension_failed; the hook answers 200). Return its result. */
export function fail(message: string): i32 {
  error_set(Memory.allocateString(message).offset);
  return 1;
}

/** A configuration value (only keys listed in scopes.config_keys are readable), or "". */
export function config(key: string): string {
  const value = Config.get(key);
  return value === null ? "" : <string>value;
}

/** A string of an object, or "". */
export function str(obj: JSON.Obj | null, key: string): string {
  if (obj === null) return "";
  const value = obj.getValue(key);
  if (value === null) return "";
  if (value.isString) return (<JSON.Str>value).valueOf();
  if (value.isNull) return "";
  return value.stringify();
}

/** Quotes a string as JSON. */
export function q(s: string): string {
  const enc = new JSON.Str(s);
  return enc.stringify();
}
