// A webhook relay (SPEC "Inbound extension hook behaviour"). The host passes the raw request:
// {method, path, query, headers, body_base64}; this plugin answers the GET handshake, checks the
// vendor's shared secret (X-Webhook-Secret), drops events it has seen (by X-Event-Id) and POSTs
// each new event to relay_url. Its answer: 401 for a bad secret, 503 when the relay target fails
// (the vendor retries), 200 otherwise.
import { Var } from "@extism/as-pdk";
import { config, http, input, output, q, str } from "./helpers";
export { pluginAbort } from "./helpers";

export function webhook_receive(): i32 {
  const req = input();
  const headers = req.getObj("headers");
  const query = req.getObj("query");
  if (str(req, "method") == "GET") {
    const challenge = str(query, "challenge");
    return output('{"status":200,"headers":{"content-type":"text/plain"},"body":' + q(challenge.length > 0 ? challenge : "ok") + "}");
  }
  const secret = config("webhook_secret");
  if (secret.length == 0 || str(headers, "x-webhook-secret") != secret) return output('{"status":401,"body":"bad secret"}');
  const eventId = str(headers, "x-event-id");
  if (eventId.length > 0) {
    // Warm instances live on between calls: remember recent ids (a plugin variable).
    const seen = Var.getString("seen");
    const list = seen === null ? "" : <string>seen;
    if (list.includes("|" + eventId + "|")) return output('{"status":200,"body":"duplicate"}');
    Var.set("seen", Uint8Array.wrap(String.UTF8.encode((list.length > 2000 ? "" : list) + "|" + eventId + "|")));
  }
  const relayed = http("POST", config("relay_url"), '{"event_id":' + q(eventId) + ',"body_base64":' + q(str(req, "body_base64")) + "}", '{"content-type":"application/json"}');
  if (relayed.status < 200 || relayed.status >= 300) return output('{"status":503,"headers":{"retry-after":"60"}}');
  return output('{"status":200,"body":{"relayed":true}}');
}
