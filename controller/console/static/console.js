// The CATS console's one script: live values over server-sent events, ticking ages.
// Pages work without it (the tables are plain HTML); it only keeps them current.
"use strict";
(function () {
  function ageText(ms) {
    var s = ms / 1000;
    if (s < 10) return s.toFixed(1) + " s";
    if (s < 120) return Math.floor(s) + " s";
    if (s < 7200) return Math.floor(s / 60) + " min";
    return Math.floor(s / 3600) + " h";
  }
  var ages = {};  // id -> [age in ms when set, performance.now() then]
  function setAge(el, ms) {
    ages[el.id] = [ms, performance.now()];
    el.textContent = ageText(ms);
  }
  function tick() {
    var now = performance.now();
    Object.keys(ages).forEach(function (id) {
      var el = document.getElementById(id);
      if (el) el.textContent = ageText(ages[id][0] + (now - ages[id][1]));
    });
  }
  function apply(update) {
    var id;
    var cells = update.cells || {};
    for (id in cells) {
      var cell = document.getElementById(id);
      if (!cell) continue;
      var target = cell.querySelector("a") || cell;
      if (target.textContent !== cells[id]) {
        target.textContent = cells[id];
        cell.classList.add("changed");
        cell.dataset.updated = String(Date.now());
      }
    }
    var aged = update.ages || {};
    for (id in aged) {
      var el = document.getElementById(id);
      if (el) setAge(el, aged[id]);
    }
    var charts = update.charts || {};
    for (id in charts) {
      var box = document.getElementById(id);
      if (box) { box.innerHTML = charts[id]; box.dataset.updated = String(Date.now()); }
    }
    if (typeof update.notice === "string") {
      document.getElementById("live-notice").textContent = update.notice;
    }
    document.body.dataset.liveUpdates = String(Number(document.body.dataset.liveUpdates || 0) + 1);
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-age-ms]").forEach(function (el) {
      setAge(el, Number(el.dataset.ageMs));
    });
    setInterval(tick, 1000);
    var url = document.body.dataset.live;
    if (!url || !window.EventSource) return;
    var source = new EventSource(url);
    source.onopen = function () { document.body.dataset.liveOpen = "yes"; };
    source.onmessage = function (event) { apply(JSON.parse(event.data)); };
    source.onerror = function () { document.body.dataset.liveOpen = "no"; };
  });
})();
