// toolgate approval page: live pending list (server-sent events), answers by
// fetch, a second click for destructive requests, countdowns. The page works
// without this script (plain forms, reload to refresh).
"use strict";
(function () {
  document.documentElement.classList.add("js");
  var list = document.getElementById("pending");
  if (!list) return;
  var empty = document.getElementById("empty");
  var count = document.getElementById("count");
  var live = document.getElementById("live");
  var baseTitle = document.title;

  function cards() { return list.querySelectorAll("article.ask"); }

  function refreshCount() {
    var n = cards().length;
    count.textContent = n ? "(" + n + ")" : "";
    empty.hidden = n > 0;
    document.title = n ? "(" + n + ") " + baseTitle : baseTitle;
  }

  // Keep cards that are still pending (a half-typed message survives), add new
  // ones in order, drop answered or withdrawn ones.
  function sync(asks) {
    var wanted = {};
    asks.forEach(function (a) { wanted["ask-" + a.id] = a; });
    cards().forEach(function (card) { if (!wanted[card.id]) card.remove(); });
    var previous = null;
    asks.forEach(function (a) {
      var card = document.getElementById("ask-" + a.id);
      if (!card) {
        var holder = document.createElement("div");
        holder.innerHTML = a.html; // rendered and escaped by the server
        card = holder.firstElementChild;
        if (!card) return;
      }
      // Move only what is out of place: moving a card would blur a half-typed message.
      if (previous) {
        if (previous.nextElementSibling !== card) previous.after(card);
      } else if (list.firstElementChild !== card) {
        list.prepend(card);
      }
      previous = card;
    });
    refreshCount();
    tick();
  }

  function connect() {
    var source = new EventSource("/approvals/events");
    source.addEventListener("pending", function (e) {
      live.textContent = "Updates live while this page is open.";
      live.classList.remove("offline");
      sync(JSON.parse(e.data).asks);
    });
    source.onerror = function () {
      live.textContent = "Connection lost; retrying…";
      live.classList.add("offline");
    };
  }

  function disarm(form) {
    form.querySelectorAll("button.armed").forEach(function (b) {
      b.classList.remove("armed");
      b.textContent = b.dataset.label;
    });
  }

  list.addEventListener("submit", function (e) {
    e.preventDefault();
    var form = e.target;
    var button = e.submitter;
    if (!button) return;
    var card = form.closest("article.ask");
    var error = form.querySelector(".error");
    var answer = button.value;
    var body = new URLSearchParams();
    body.set("answer", answer);
    if (answer === "reject") body.set("message", form.elements.message.value);
    if (card.dataset.destructive === "1" && answer !== "reject") {
      if (!button.classList.contains("armed")) {
        disarm(form);
        button.dataset.label = button.textContent;
        button.classList.add("armed");
        button.textContent = "Click again to run this destructive request";
        error.textContent = "";
        return;
      }
      body.set("confirm", "yes");
    }
    form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    fetch(form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "Accept": "application/json" }
    }).then(function (r) {
      return r.json().then(function (j) { return { ok: r.ok, json: j }; });
    }).then(function (res) {
      if (res.ok) {
        card.remove();
        refreshCount();
      } else {
        error.textContent = res.json.error || "The answer was refused.";
        form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
        disarm(form);
      }
    }).catch(function (err) {
      error.textContent = "Could not send the answer: " + err;
      form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
    });
  });

  function tick() {
    var now = Date.now();
    cards().forEach(function (card) {
      var left = Math.max(0, Math.round((Number(card.dataset.deadline) - now) / 1000));
      var timer = card.querySelector(".timer");
      if (timer) timer.textContent = left > 0 ? "denied in " + left + " s if unanswered" : "timing out…";
    });
  }
  setInterval(tick, 1000);

  refreshCount();
  tick();
  connect();
})();
