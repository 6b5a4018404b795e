// A context tool: looks up the ticket's requester in a CRM and shows the account in the panel.
// Vendor API used: GET {base_url}/accounts?email=<email> → {"name","plan","mrr","url"} (404: none).
import { JSON } from "assemblyscript-json/assembly";
import { config, http, input, output, q, str } from "./helpers";
export { pluginAbort } from "./helpers";

export function fetch_context(): i32 {
  const ticket = input().getObj("ticket");
  const email = str(ticket, "requester_email");
  const res = http("GET", config("base_url") + "/accounts?email=" + encodeURIComponent(email), "", '{"authorization":' + q("Bearer " + config("api_token")) + "}");
  if (res.status == 404) {
    return output('{"title":"CRM","fields":[{"label":"Account","value":"No account for ' + email + '"}],"actions":[],"checklist":[]}');
  }
  if (res.status != 200) return output('{"title":"CRM","fields":[{"label":"Error","value":' + q("CRM answered " + res.status.toString()) + '}],"actions":[],"checklist":[]}');
  const account = res.json();
  return output('{"title":"CRM","fields":[' +
    '{"label":"Account","value":' + q(str(account, "name")) + ',"url":' + q(str(account, "url")) + "}," +
    '{"label":"Plan","value":' + q(str(account, "plan")) + "}," +
    '{"label":"MRR","value":' + q(str(account, "mrr")) + "}]," +
    '"actions":[{"id":"open","label":"Open in CRM","kind":"open_url","url":' + q(str(account, "url")) + '}],"checklist":[]}');
}
