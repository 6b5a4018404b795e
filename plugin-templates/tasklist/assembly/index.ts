// A task-tracker plugin (SPEC "Operation hooks for task-tracker plugins").
// Vendor API used (all with "Authorization: Bearer <api_token>"):
//   GET  {base_url}/projects                       → [{"id","name"}]
//   GET  {base_url}/tasks?q=<text>                 → [{"key","title"}]
//   GET  {base_url}/tasks/<key>                    → {"key","title","status","assignee","priority","url","items":[{"id","name","completed"}]}
//   POST {base_url}/tasks {"project","title","description"} → the task
//   PUT  {base_url}/tasks/<key>/items/<id> {"completed":true|false} → the item
import { JSON } from "assemblyscript-json/assembly";
import { config, fail, http, HttpResponse, input, output, q, str } from "./helpers";
export { pluginAbort } from "./helpers";

function auth(): string {
  return '{"authorization":' + q("Bearer " + config("api_token")) + ',"content-type":"application/json"}';
}

function api(method: string, path: string, body: string = ""): HttpResponse {
  return http(method, config("base_url") + path, body, auth());
}

/** The context panel: the linked task with its checklist, or an invitation to link or create one. */
export function fetch_context(): i32 {
  const link = input().getValue("link");
  if (link === null || !link.isString) {
    return output('{"title":"Tasks","fields":[{"label":"Task","value":"Not linked"}],"actions":[{"id":"create","label":"Create task","kind":"run_op","op":"create_task"}],"checklist":[]}');
  }
  const res = api("GET", "/tasks/" + encodeURIComponent((<JSON.Str>link).valueOf()));
  if (res.status != 200) return fail("the tracker answered " + res.status.toString());
  const task = res.json();
  let checklist = "";
  const items = task.getArr("items");
  if (items !== null) {
    const list = items.valueOf();
    for (let i = 0; i < list.length; i++) {
      if (!list[i].isObj) continue;
      const item = <JSON.Obj>list[i];
      const done = item.getBool("completed");
      if (checklist.length > 0) checklist += ",";
      checklist += '{"id":' + q(str(item, "id")) + ',"name":' + q(str(item, "name")) + ',"completed":' + (done !== null && done.valueOf() ? "true" : "false") + "}";
    }
  }
  return output('{"title":' + q(str(task, "key") + " " + str(task, "title")) + ',"fields":[' +
    '{"label":"Status","value":' + q(str(task, "status")) + "}," +
    '{"label":"Assignee","value":' + q(str(task, "assignee")) + "}," +
    '{"label":"Task","value":' + q(str(task, "key")) + ',"url":' + q(str(task, "url")) + "}]," +
    '"actions":[{"id":"open","label":"Open task","kind":"open_url","url":' + q(str(task, "url")) + "}]," +
    '"checklist":[' + checklist + "]}");
}

/** The create form: a project (options from list_projects), a title, a description. */
export function create_form(): i32 {
  return output('{"fields":[' +
    '{"key":"project","label":"Project","kind":"select","required":true,"options_op":"list_projects"},' +
    '{"key":"title","label":"Title","kind":"text","required":true},' +
    '{"key":"description","label":"Description","kind":"textarea","required":false,"rich_text_format":"markdown"}]}');
}

function options(res: HttpResponse, valueKey: string, labelKey: string): i32 {
  if (res.status != 200) return fail("the tracker answered " + res.status.toString());
  const parsed = JSON.parse(res.body);
  let out = "";
  if (parsed.isArr) {
    const list = (<JSON.Arr>parsed).valueOf();
    for (let i = 0; i < list.length; i++) {
      if (!list[i].isObj) continue;
      const o = <JSON.Obj>list[i];
      if (out.length > 0) out += ",";
      out += '{"value":' + q(str(o, valueKey)) + ',"label":' + q(str(o, labelKey)) + "}";
    }
  }
  return output('{"options":[' + out + "]}");
}

export function list_projects(): i32 {
  return options(api("GET", "/projects"), "id", "name");
}

export function search_tasks(): i32 {
  return options(api("GET", "/tasks?q=" + encodeURIComponent(str(input(), "q"))), "key", "title");
}

/** The create op: the service records the link to the returned key and audits it. */
export function create_task(): i32 {
  const doc = input();
  const values = doc.getObj("values");
  const ticket = doc.getObj("ticket");
  const title = str(values, "title").length > 0 ? str(values, "title") : str(ticket, "subject");
  const body = '{"project":' + q(str(values, "project")) + ',"title":' + q(title) + ',"description":' + q(str(values, "description")) + "}";
  const res = api("POST", "/tasks", body);
  if (res.status != 201 && res.status != 200) return fail("the tracker answered " + res.status.toString());
  const task = res.json();
  return output('{"key":' + q(str(task, "key")) + ',"title":' + q(str(task, "title")) + ',"status":' + q(str(task, "status")) +
    ',"assignee":' + q(str(task, "assignee")) + ',"priority":' + q(str(task, "priority")) + ',"url":' + q(str(task, "url")) + "}");
}

/** Linking checks the task exists, so a typo does not bind the ticket to nothing. */
export function link_task(): i32 {
  const res = api("GET", "/tasks/" + encodeURIComponent(str(input(), "external_id")));
  if (res.status != 200) return fail("no such task");
  return output('{"linked":true}');
}

export function unlink_task(): i32 {
  return output('{"unlinked":true}');
}

/** The checklist toggle: params.item_id and params.completed ("true"/"false"); `link` is the linked task. */
export function toggle_item(): i32 {
  const doc = input();
  const params = doc.getObj("params");
  const key = str(params, "task").length > 0 ? str(params, "task") : str(doc, "link");
  const res = api("PUT", "/tasks/" + encodeURIComponent(key) + "/items/" + encodeURIComponent(str(params, "item_id")),
    '{"completed":' + (str(params, "completed") == "true" ? "true" : "false") + "}");
  if (res.status != 200) return fail("the tracker answered " + res.status.toString());
  return output('{"summary":' + q("item " + str(params, "item_id") + (str(params, "completed") == "true" ? " done" : " reopened")) + "}");
}
