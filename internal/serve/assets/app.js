// xdev serve's script: what a page does after it loads. Every page works
// without it; this adds search as you type, keyboard moves, the live
// updates of the sessions list and of a session's page, and copying.
"use strict";
(function () {
  const page = document.body.dataset.page;

  // "/" focuses the search box; j/k (or the arrows) move among the rows
  // or hits, Enter opens the one focused.
  function items() { return Array.from(document.querySelectorAll(".nav-item[href]")); }
  function typing(el) { return el && (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA"); }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const box = document.getElementById("q") || document.getElementById("quick");
    if (e.key === "/" && !typing(document.activeElement) && box) {
      e.preventDefault(); box.focus(); box.select(); return;
    }
    if (e.key === "Escape" && typing(document.activeElement)) { document.activeElement.blur(); return; }
    const list = items();
    if (!list.length) return;
    const at = list.indexOf(document.activeElement);
    let next = -1;
    if (e.key === "ArrowDown" && (at >= 0 || document.activeElement === box)) next = at + 1;
    else if (e.key === "ArrowUp" && at >= 0) next = at - 1;
    else if (!typing(document.activeElement) && e.key === "j") next = at + 1;
    else if (!typing(document.activeElement) && e.key === "k") next = at < 0 ? 0 : at - 1;
    else return;
    e.preventDefault();
    if (next < 0) { if (box && e.key === "ArrowUp") box.focus(); return; }
    list[Math.min(next, list.length - 1)].focus();
  });

  // Filters apply as they change.
  const filters = document.getElementById("filters");
  if (filters) {
    filters.querySelectorAll("select, input[type=checkbox]").forEach(function (el) {
      el.addEventListener("change", function () { filters.submit(); });
    });
  }

  // Search as you type: the result list is asked for alone (fragment=1)
  // 200 ms after the last key, and the URL follows the query.
  const search = document.getElementById("search");
  if (search) {
    let timer = 0, seq = 0;
    const run = function () {
      const params = new URLSearchParams(new FormData(search));
      for (const [k, v] of Array.from(params.entries())) if (v === "") params.delete(k);
      const qs = params.toString();
      history.replaceState(null, "", "/search" + (qs ? "?" + qs : ""));
      const mine = ++seq;
      params.set("fragment", "1");
      fetch("/search?" + params.toString(), { credentials: "same-origin" })
        .then(function (r) { return r.text(); })
        .then(function (html) { if (mine === seq) document.getElementById("hits").innerHTML = html; });
    };
    search.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 200); });
    search.addEventListener("change", function (e) { if (e.target.tagName !== "INPUT" || e.target.type === "checkbox") run(); });
    search.addEventListener("submit", function (e) { e.preventDefault(); clearTimeout(timer); run(); });
  }

  // Copy buttons.
  document.querySelectorAll("button.copy").forEach(function (b) {
    b.addEventListener("click", function () {
      if (navigator.clipboard) navigator.clipboard.writeText(b.dataset.copy).then(function () { b.textContent = "Copied"; });
    });
  });

  // The sessions list updates when sessions change: the list is fetched
  // again and put in place (at most every second).
  if (page === "sessions" && document.getElementById("list") && window.EventSource) {
    const es = new EventSource("/events");
    let pending = false;
    es.addEventListener("sessions", function () {
      if (pending) return;
      pending = true;
      setTimeout(function () {
        fetch(location.href, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
          pending = false;
          const doc = new DOMParser().parseFromString(html, "text/html");
          const fresh = doc.getElementById("list"), list = document.getElementById("list");
          if (fresh && list) list.replaceWith(fresh);
        });
      }, 300);
    });
  }

  // A session's page, when it shows the newest entries, takes the new
  // ones as they are written: the server says the session changed, the
  // page asks for the entries after the last it has.
  const main = document.getElementById("entries");
  if (main && main.dataset.live && window.EventSource) {
    const key = main.dataset.key;
    const es = new EventSource("/events?s=" + encodeURIComponent(key));
    let busy = false, again = false;
    const pull = function () {
      if (busy) { again = true; return; }
      busy = true;
      const params = new URLSearchParams({ id: main.dataset.last });
      if (main.dataset.leaf) params.set("leaf", main.dataset.leaf);
      fetch("/s/" + key + "/after?" + params.toString(), { credentials: "same-origin" }).then(function (r) {
        if (r.status === 409) { location.reload(); return null; }
        if (!r.ok) return null;
        const last = r.headers.get("X-Xdev-Last");
        return r.text().then(function (html) {
          if (last) main.dataset.last = last;
          if (!html.trim()) return;
          const bottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
          main.insertAdjacentHTML("beforeend", html);
          if (bottom) window.scrollTo(0, document.body.scrollHeight);
        });
      }).finally(function () { busy = false; if (again) { again = false; pull(); } });
    };
    es.addEventListener("session", function (e) { if (e.data === key) pull(); });
  }
})();
