// A chat-ops plugin. The ticket's link is a chat channel id (link it from the panel).
// Vendor API used (with "Authorization: Bearer <bot_token>"):
//   GET  {base_url}/channels                         → [{"id","name"}]
//   GET  {base_url}/channels/<id>/messages?limit=5   → [{"author","text"}]
//   POST {base_url}/channels/<id>/messages {"text"}  → {"id"}
//   POST {base_url}/channels/<id>/threads {"title"}   → {"id","url"}
//   POST {base_url}/channels/<id>/threads/<thread>/messages {"text"} → {"id"}
import { JSON } from "assemblyscript-json/assembly";
import { config, fail, http, input, output, q, str } from "./helpers";
export { pluginAbort } from "./helpers";

function auth(): string {
  return '{"authorization":' + q("Bearer " + config("bot_token")) + ',"content-type":"application/json"}';
}

function channelOf(doc: JSON.Obj): string {
  const link = str(doc, "link");
  return link.length > 0 ? link : config("default_channel");
}

/** The panel: the channel's latest messages, and a button that posts the ticket to it. */
export function fetch_context(): i32 {
  const doc = input();
  const channel = channelOf(doc);
  if (channel.length == 0) return output('{"title":"Chat","fields":[{"label":"Channel","value":"Not linked"}],"actions":[],"checklist":[]}');
  const res = http("GET", config("base_url") + "/channels/" + encodeURIComponent(channel) + "/messages?limit=5", "", auth());
  if (res.status != 200) return fail("the chat service answered " + res.status.toString());
  let fields = '{"label":"Channel","value":' + q(channel) + "}";
  const parsed = JSON.parse(res.body);
  if (parsed.isArr) {
    const list = (<JSON.Arr>parsed).valueOf();
    for (let i = 0; i < list.length; i++) {
      if (!list[i].isObj) continue;
      const m = <JSON.Obj>list[i];
      fields += ',{"label":' + q(str(m, "author")) + ',"value":' + q(str(m, "text")) + "}";
    }
  }
  return output('{"title":"Chat","fields":[' + fields + '],"actions":[{"id":"post","label":"Post update","kind":"run_op","op":"post_update","inputs":[{"key":"text","label":"Message","kind":"textarea"}]}],"checklist":[]}');
}

/** An action: posts params.text (or the ticket's subject) to the channel. */
export function post_update(): i32 {
  const doc = input();
  const params = doc.getObj("params");
  const ticket = doc.getObj("ticket");
  const channel = channelOf(doc);
  const text = str(params, "text").length > 0 ? str(params, "text") : "#" + str(ticket, "ticket_number") + " " + str(ticket, "subject");
  const res = http("POST", config("base_url") + "/channels/" + encodeURIComponent(channel) + "/messages", '{"text":' + q(text) + "}", auth());
  if (res.status != 200 && res.status != 201) return fail("the chat service answered " + res.status.toString());
  return output('{"summary":' + q("posted to " + channel) + "}");
}

/** A read op: the channels to link a ticket to. */
export function list_channels(): i32 {
  const res = http("GET", config("base_url") + "/channels", "", auth());
  let out = "";
  const parsed = JSON.parse(res.body);
  if (res.status == 200 && parsed.isArr) {
    const list = (<JSON.Arr>parsed).valueOf();
    for (let i = 0; i < list.length; i++) {
      if (!list[i].isObj) continue;
      const c = <JSON.Obj>list[i];
      if (out.length > 0) out += ",";
      out += '{"value":' + q(str(c, "id")) + ',"label":' + q(str(c, "name")) + "}";
    }
  }
  return output('{"options":[' + out + "]}");
}

/** Chat-ops: opens the ticket's thread in the channel bound to its team (POST /tickets/{id}/chat-thread). */
export function open_thread(): i32 {
  const doc = input();
  const ticket = doc.getObj("ticket");
  const channel = str(doc, "channel_id");
  const title = "#" + str(ticket, "ticket_number") + " " + str(ticket, "subject");
  const res = http("POST", config("base_url") + "/channels/" + encodeURIComponent(channel) + "/threads", '{"title":' + q(title) + "}", auth());
  if (res.status != 200 && res.status != 201) return fail("the chat service answered " + res.status.toString());
  const parsed = JSON.parse(res.body);
  if (!parsed.isObj) return fail("the chat service answered no thread");
  const thread = <JSON.Obj>parsed;
  return output('{"thread_id":' + q(str(thread, "id")) + ',"url":' + q(str(thread, "url")) + "}");
}

/** Chat-ops: a note from the desk into the ticket's thread (POST /tickets/{id}/thread-notes). */
export function post_thread_note(): i32 {
  const doc = input();
  const author = str(doc.getObj("author"), "name");
  const url = config("base_url") + "/channels/" + encodeURIComponent(str(doc, "channel_id")) + "/threads/" + encodeURIComponent(str(doc, "thread_id")) + "/messages";
  const text = author.length > 0 ? author + ": " + str(doc, "body") : str(doc, "body");
  const res = http("POST", url, '{"text":' + q(text) + "}", auth());
  if (res.status != 200 && res.status != 201) return fail("the chat service answered " + res.status.toString());
  const parsed = JSON.parse(res.body);
  return output('{"id":' + q(parsed.isObj ? str(<JSON.Obj>parsed, "id") : "") + "}");
}
