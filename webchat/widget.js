/*
 * Helpdesk chat widget: dependency-free, served by the daemon at {site_url}/webchat/widget.js.
 * Embed with the widget's `embed_snippet`:
 *   <script src="{site_url}/webchat/widget.js" data-widget-id="{id}" async></script>
 * It speaks the public visitor API: POST /webchat/widgets/{id}/conversations (once, on first
 * open), then with the visitor token: the visitor's event stream (server-sent events, read with
 * fetch so the token can be sent as a header; resumed with Last-Event-ID), POST
 * /webchat/visitor/messages, and a ping every 30 s. Text is always inserted as text, never HTML.
 */
(function () {
  'use strict';
  var script = document.currentScript || document.querySelector('script[data-widget-id]');
  if (!script) return;
  var widgetId = script.getAttribute('data-widget-id');
  var api = new URL(script.src).origin + '/api/v1';
  var storeKey = 'helpdesk-chat-' + widgetId;
  var state = { token: null, lastEventId: null, seen: {}, open: false, ended: false, streaming: false };
  try {
    var saved = JSON.parse(window.sessionStorage.getItem(storeKey) || 'null');
    if (saved && saved.token) state.token = saved.token;
  } catch (e) { /* storage unavailable: a new conversation per page */ }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    for (var key in attrs) node.setAttribute(key, attrs[key]);
    if (text != null) node.textContent = text;
    return node;
  }

  var css = '#helpdesk-chat-launcher{position:fixed;right:20px;bottom:20px;z-index:2147483000;border:0;border-radius:24px;padding:12px 18px;background:#1f6feb;color:#fff;font:600 14px system-ui,sans-serif;cursor:pointer}'
    + '#helpdesk-chat-panel{position:fixed;right:20px;bottom:72px;z-index:2147483000;width:320px;max-height:460px;display:none;flex-direction:column;background:#fff;border:1px solid #d0d7de;border-radius:10px;box-shadow:0 8px 24px rgba(0,0,0,.15);font:14px system-ui,sans-serif}'
    + '#helpdesk-chat-messages{flex:1;overflow-y:auto;padding:10px;min-height:200px}'
    + '.helpdesk-chat-line{margin:6px 0;padding:6px 10px;border-radius:8px;white-space:pre-wrap;max-width:85%}'
    + '.helpdesk-chat-visitor{margin-left:auto;background:#1f6feb;color:#fff}.helpdesk-chat-bot,.helpdesk-chat-agent{background:#f0f3f6}'
    + '.helpdesk-chat-note{color:#57606a;font-size:12px;text-align:center}'
    + '#helpdesk-chat-form{display:flex;border-top:1px solid #d0d7de}#helpdesk-chat-input{flex:1;border:0;padding:10px}#helpdesk-chat-send{border:0;background:none;color:#1f6feb;padding:0 12px;cursor:pointer}'
    + '.helpdesk-chat-choice{margin:2px 4px 2px 0;border:1px solid #1f6feb;background:#fff;color:#1f6feb;border-radius:12px;padding:2px 8px;cursor:pointer}';
  document.head.appendChild(el('style', {}, css));
  var launcher = el('button', { id: 'helpdesk-chat-launcher', type: 'button' }, 'Chat with us');
  var panel = el('div', { id: 'helpdesk-chat-panel', role: 'dialog', 'aria-label': 'Chat' });
  var list = el('div', { id: 'helpdesk-chat-messages', 'aria-live': 'polite' });
  var form = el('form', { id: 'helpdesk-chat-form' });
  var input = el('input', { id: 'helpdesk-chat-input', type: 'text', maxlength: '4000', placeholder: 'Write a message…', autocomplete: 'off' });
  var send = el('button', { id: 'helpdesk-chat-send', type: 'submit' }, 'Send');
  form.appendChild(input);
  form.appendChild(send);
  panel.appendChild(list);
  panel.appendChild(form);
  document.body.appendChild(panel);
  document.body.appendChild(launcher);

  function note(text) {
    list.appendChild(el('div', { 'class': 'helpdesk-chat-note' }, text));
    list.scrollTop = list.scrollHeight;
  }

  function show(message) {
    if (state.seen[message.id]) return;
    state.seen[message.id] = true;
    var line = el('div', { 'class': 'helpdesk-chat-line helpdesk-chat-' + message.from, 'data-from': message.from }, message.text);
    list.appendChild(line);
    if (message.choices && message.choices.length) {
      var row = el('div', { 'class': 'helpdesk-chat-choices' });
      message.choices.forEach(function (label) {
        var button = el('button', { 'class': 'helpdesk-chat-choice', type: 'button' }, label);
        button.addEventListener('click', function () { say(label); });
        row.appendChild(button);
      });
      list.appendChild(row);
    }
    list.scrollTop = list.scrollHeight;
  }

  function handle(event, data) {
    if (event === 'message') show(data);
    else if (event === 'agent_joined') note((data.agent && data.agent.name ? data.agent.name : 'An agent') + ' joined the chat');
    else if (event === 'ended') {
      state.ended = true;
      note('The chat has ended');
      input.disabled = true;
      send.disabled = true;
      try { window.sessionStorage.removeItem(storeKey); } catch (e) { /* ignore */ }
    }
  }

  function request(method, path, body) {
    var headers = { 'Content-Type': 'application/json' };
    if (state.token) headers.Authorization = 'Bearer ' + state.token;
    return fetch(api + path, { method: method, headers: headers, body: body ? JSON.stringify(body) : undefined }).then(function (response) {
      if (!response.ok) throw new Error('chat request failed: ' + response.status);
      return response.status === 204 ? null : response.json();
    });
  }

  /** Reads the visitor's event stream; reconnects after it ends, resuming after the last event. */
  function stream() {
    if (state.streaming || state.ended || !state.token) return;
    state.streaming = true;
    var headers = { Authorization: 'Bearer ' + state.token, Accept: 'text/event-stream' };
    if (state.lastEventId) headers['Last-Event-ID'] = state.lastEventId;
    var retry = 3000;
    fetch(api + '/webchat/visitor/stream', { headers: headers }).then(function (response) {
      if (!response.ok || !response.body) throw new Error('stream refused: ' + response.status);
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = '';
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) return;
          buffer += decoder.decode(chunk.value, { stream: true });
          var cut;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            var block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            var id = null, name = 'message', data = null;
            block.split('\n').forEach(function (line) {
              if (line.indexOf('id: ') === 0) id = line.slice(4);
              else if (line.indexOf('event: ') === 0) name = line.slice(7);
              else if (line.indexOf('data: ') === 0) data = line.slice(6);
              else if (line.indexOf('retry: ') === 0) retry = Number(line.slice(7)) || retry;
            });
            if (data !== null) {
              if (id) state.lastEventId = id;
              try { handle(name, JSON.parse(data)); } catch (e) { /* a malformed event is skipped */ }
            }
          }
          return pump();
        });
      }
      return pump();
    }).catch(function () { /* reconnect below */ }).then(function () {
      state.streaming = false;
      if (!state.ended) setTimeout(stream, retry);
    });
  }

  function start() {
    if (state.token) return Promise.resolve();
    return request('POST', '/webchat/widgets/' + encodeURIComponent(widgetId) + '/conversations', {}).then(function (answer) {
      state.token = answer.visitor_token;
      try { window.sessionStorage.setItem(storeKey, JSON.stringify({ token: state.token })); } catch (e) { /* ignore */ }
    });
  }

  function say(text) {
    text = String(text || '').trim();
    if (!text || state.ended) return;
    start().then(function () {
      return request('POST', '/webchat/visitor/messages', { message: text });
    }).then(function (message) {
      if (message) show(message);
    }).catch(function () { note('The message could not be sent; try again'); });
  }

  launcher.addEventListener('click', function () {
    state.open = !state.open;
    panel.style.display = state.open ? 'flex' : 'none';
    if (state.open) {
      start().then(stream).catch(function () { note('The chat is not available right now'); });
      input.focus();
    }
  });
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var text = input.value;
    input.value = '';
    say(text);
  });
  setInterval(function () {
    if (state.token && !state.ended) request('POST', '/webchat/visitor/ping').catch(function () { /* next time */ });
  }, 30000);
})();
