// toolgate approval page: live pending asks and questions (server-sent
// events), answers by fetch, a second click for destructive requests,
// countdowns. The page works without this script (plain forms, reload to
// refresh).
"use strict";
(function () {
  document.documentElement.classList.add("js");
  var list = document.getElementById("pending");
  if (!list) return;
  var questions = document.getElementById("questions");
  var questionsSection = document.getElementById("questions-section");
  var empty = document.getElementById("empty");
  var count = document.getElementById("count");
  var live = document.getElementById("live");
  var baseTitle = document.title;

  function cards() { return list.querySelectorAll("article.ask"); }
  function questionCards() { return questions.querySelectorAll("article.question"); }

  function refreshCount() {
    var asked = questionCards().length;
    var n = cards().length + asked;
    count.textContent = n ? "(" + n + ")" : "";
    empty.hidden = n > 0;
    questionsSection.hidden = asked === 0;
    document.title = n ? "(" + n + ") " + baseTitle : baseTitle;
  }

  // Keep cards that are still pending (a half-typed message survives), add new
  // ones in order, drop answered or withdrawn ones.
  function sync(asks, asked) {
    place(list, "ask", asks);
    place(questions, "question", asked || []);
    refreshCount();
    tick();
  }

  function place(holderList, kind, items) {
    var wanted = {};
    items.forEach(function (a) { wanted[kind + "-" + a.id] = a; });
    holderList.querySelectorAll("article." + kind).forEach(function (card) {
      if (!wanted[card.id]) card.remove();
    });
    var previous = null;
    items.forEach(function (a) {
      var card = document.getElementById(kind + "-" + a.id);
      if (!card) {
        var holder = document.createElement("div");
        holder.innerHTML = a.html; // rendered and escaped by the server
        card = holder.firstElementChild;
        if (!card) return;
      }
      // Move only what is out of place: moving a card would blur a half-typed message.
      if (previous) {
        if (previous.nextElementSibling !== card) previous.after(card);
      } else if (holderList.firstElementChild !== card) {
        holderList.prepend(card);
      }
      previous = card;
    });
  }

  function connect() {
    var source = new EventSource("/approvals/events");
    source.addEventListener("pending", function (e) {
      live.textContent = "Updates live while this page is open.";
      live.classList.remove("offline");
      var data = JSON.parse(e.data);
      sync(data.asks, data.questions);
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
    send(form, card, error, body, null);
  });

  // A question's reply: one string per question (own words beat the picked
  // option), or a decline with an optional message; sent as JSON.
  questions.addEventListener("submit", function (e) {
    e.preventDefault();
    var form = e.target;
    var button = e.submitter;
    if (!button) return;
    var card = form.closest("article.question");
    var error = form.querySelector(".error");
    var reply;
    if (button.value === "decline") {
      reply = { decline: true, message: form.elements.message.value };
    } else {
      var answers = [];
      form.querySelectorAll("fieldset.asked").forEach(function (set) {
        var n = set.dataset.n;
        var own = set.querySelector("input[name='answer_" + n + "_other']");
        var picked = set.querySelector("input[name='answer_" + n + "']:checked") ||
          set.querySelector("input[type=text][name='answer_" + n + "']");
        var text = own && own.value.trim() ? own.value : (picked ? picked.value : "");
        answers.push(text);
      });
      reply = { answers: answers };
    }
    send(form, card, error, JSON.stringify(reply), "application/json");
  });

  function send(form, card, error, body, type) {
    form.querySelectorAll("button:not(.no-default)").forEach(function (b) { b.disabled = true; });
    var headers = { "Accept": "application/json" };
    if (type) headers["Content-Type"] = type;
    fetch(form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: headers
    }).then(function (r) {
      return r.json().then(function (j) { return { ok: r.ok, json: j }; });
    }).then(function (res) {
      if (res.ok) {
        card.remove();
        refreshCount();
      } else {
        error.textContent = res.json.error || "The answer was refused.";
        form.querySelectorAll("button:not(.no-default)").forEach(function (b) { b.disabled = false; });
        disarm(form);
      }
    }).catch(function (err) {
      error.textContent = "Could not send the answer: " + err;
      form.querySelectorAll("button:not(.no-default)").forEach(function (b) { b.disabled = false; });
    });
  }

  // Enter in a reject or decline message sends that, not the form's first
  // button ("Allow once", "Send answer"), which is what a browser would press.
  document.addEventListener("keydown", function (e) {
    var field = e.target;
    if (e.key !== "Enter" || !field.form || field.name !== "message") return;
    var button = field.form.querySelector("button.reject");
    if (!button) return;
    e.preventDefault();
    button.click();
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
