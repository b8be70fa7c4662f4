/*
 * The RagaliQ Gate HTML report's script: it unpacks the cases' data (deflated JSON in the page)
 * and renders what is on screen, a page of cases at a time, problems first; search and filters
 * run over the data. Every string from the data is inserted with textContent, never as markup.
 * The record layout is described in ragaliq/report/_html_data.py.
 */
(function () {
  "use strict";
  var doc = document;
  var body = doc.body;
  var PAGE = 50;
  var DASH = "\u2013";

  function byId(id) { return doc.getElementById(id); }
  function readJson(id) {
    var node = byId(id);
    return node ? JSON.parse(node.textContent) : null;
  }
  var config = readJson("rq-config");
  var totals = readJson("rq-totals");
  var cases = [];
  var strings = totals.strings;
  var verdicts = config.verdicts;
  var evaluators = config.evaluators;
  var SUPPORTED = 0;
  var codeOf = {};
  verdicts.forEach(function (v, i) { codeOf[v.value] = i; });

  // --- small helpers ---------------------------------------------------------------------------
  function str(value) {
    if (typeof value === "number") { return strings[value]; }
    return value == null ? "" : value;
  }
  function el(tag, cls, text) {
    var node = doc.createElement(tag);
    if (cls) { node.className = cls; }
    if (text != null && text !== "") { node.textContent = text; }
    return node;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function fmt(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function plural(n, word, many) { return fmt(n) + " " + (n === 1 ? word : (many || word + "s")); }
  function score(value, digits) { return value == null ? DASH : value.toFixed(digits); }
  function caseHash(id) { return "#case=" + encodeURIComponent(id); }
  function claimAnchor(id, n) { return "case=" + encodeURIComponent(id) + "&claim=" + n; }

  // --- the records, read lazily ----------------------------------------------------------------
  function claimsOf(r) { return r.c || []; }
  function resultsOf(r) { return r.e || []; }
  function isNew(c) { return c[8] === 1; }
  function acceptedBy(c) { return c[9] == null ? "" : str(c[9]); }
  function acceptedTag(c) {
    var tag = el("span", "tag accepted", "\u2713 accepted by @" + acceptedBy(c));
    tag.title = "accepted by a reviewer: counts as supported in the scores the gate decides on";
    return tag;
  }
  function claimText(r, c) {
    if (c[0] != null) { return str(c[0]); }
    return c[5] && r.p != null ? r.p.slice(c[5][0], c[5][1]) : "";
  }
  function failing(r) {
    var out = [];
    resultsOf(r).forEach(function (res, j) { if (res && res[1] === 0) { out.push(j); } });
    return out;
  }
  function errored(r) {
    return resultsOf(r).some(function (res) { return res && res[2] === 1; });
  }
  function newCount(r) {
    return claimsOf(r).filter(isNew).length;
  }

  var index = Object.create(null);
  var order = [];

  // --- search: one lower-cased text per case, built when idle or when first needed --------------
  var haystacks = [];
  function haystack(i) {
    var r = cases[i];
    var parts = [r.i, r.q, str(r.x), r.p || "", r.a || ""];
    claimsOf(r).concat(r.f || []).forEach(function (c) {
      parts.push(str(c[0]), str(c[3]), str(c[4]));  // a claim without text is in the response
    });
    (r.k || []).forEach(function (k) { parts.push(str(k[1])); });
    (r.t || []).forEach(function (t) { parts.push(t); });
    resultsOf(r).forEach(function (res) { if (res) { parts.push(str(res[3])); } });
    return parts.join("\n").toLowerCase();
  }
  function buildHaystacks(upTo) {
    for (var i = haystacks.length; i < upTo; i += 1) { haystacks.push(haystack(i)); }
  }
  function buildWhenIdle() {
    if (haystacks.length >= cases.length) { return; }
    buildHaystacks(Math.min(cases.length, haystacks.length + 500));
    setTimeout(buildWhenIdle, 0);
  }

  // --- filters ---------------------------------------------------------------------------------
  var search = byId("f-search");
  var byVerdict = byId("f-verdict");
  var byEvaluator = byId("f-evaluator");
  var byRetrieval = byId("f-retrieval");
  var onlyNew = byId("f-new");
  var list = byId("case-list");
  var shown = byId("f-shown");
  var empty = byId("f-empty");
  var pagers = [byId("pager-top"), byId("pager-bottom")];
  var toggles = Array.prototype.slice.call(doc.querySelectorAll("input[data-toggle-verdict]"));
  var state = { page: 0 };
  var filtered = order;
  var rendered = Object.create(null);

  function verdictMatches(r, want) {
    var claims = claimsOf(r);
    if (want === "any") { return true; }
    if (want === "unsupported") { return claims.some(function (c) { return c[1] !== SUPPORTED; }); }
    if (want === "supported-only") {
      return claims.length > 0 && claims.every(function (c) { return c[1] === SUPPORTED; });
    }
    if (want === "no-claims") { return claims.length === 0; }
    var code = codeOf[want];
    return claims.some(function (c) { return c[1] === code; });
  }
  function evaluatorMatches(r, want) {
    if (want === "any") { return true; }
    if (want === "failing-any") { return failing(r).length > 0; }
    if (want === "passing-all") { return !r.s && failing(r).length === 0 && !errored(r); }
    if (want === "errors") { return r.s === "error" || errored(r); }
    if (want.indexOf("failing:") === 0) {
      var name = want.slice(8);
      return resultsOf(r).some(function (res, j) {
        return res && res[1] === 0 && evaluators[j].name === name;
      });
    }
    return true;
  }
  function retrievalMatches(r, want) {
    if (want === "fact-missing") { return (r.f || []).some(function (c) { return c[1] !== SUPPORTED; }); }
    if (want === "irrelevant") { return (r.k || []).some(function (k) { return k[0] === 0; }); }
    return true;
  }
  function terms() {
    var query = search ? search.value.trim().toLowerCase() : "";
    return query ? query.split(/\s+/) : [];
  }
  function select(node) { return node ? node.value : "any"; }

  function applyToggles() {
    toggles.forEach(function (box) {
      body.classList.toggle("hide-" + box.getAttribute("data-toggle-verdict"), !box.checked);
    });
  }

  function apply() {
    var words = terms();
    var verdict = select(byVerdict);
    var evaluator = select(byEvaluator);
    var retrieval = select(byRetrieval);
    var wantNew = Boolean(onlyNew && onlyNew.checked);
    if (words.length) { buildHaystacks(cases.length); }
    if (!words.length && verdict === "any" && evaluator === "any" && retrieval === "any" && !wantNew) {
      filtered = order;
    } else {
      filtered = order.filter(function (i) {
        var r = cases[i];
        if (wantNew && !claimsOf(r).some(isNew)) { return false; }
        if (!verdictMatches(r, verdict) || !evaluatorMatches(r, evaluator) ||
            !retrievalMatches(r, retrieval)) { return false; }
        for (var w = 0; w < words.length; w += 1) {
          if (haystacks[i].indexOf(words[w]) < 0) { return false; }
        }
        return true;
      });
    }
    var pages = Math.max(1, Math.ceil(filtered.length / PAGE));
    state.page = Math.max(0, Math.min(state.page, pages - 1));
    applyToggles();
    renderPage();
    if (shown) { shown.textContent = "Showing " + fmt(filtered.length) + " of " + plural(cases.length, "case"); }
    if (empty) { empty.hidden = filtered.length !== 0; }
    body.setAttribute("data-query", words.join(" "));
  }

  // --- the pager -------------------------------------------------------------------------------
  function renderPagers() {
    var pages = Math.ceil(filtered.length / PAGE);
    pagers.forEach(function (nav, which) {
      if (!nav) { return; }
      nav.textContent = "";
      nav.hidden = pages <= 1;
      if (pages <= 1) { return; }
      var first = state.page * PAGE;
      function button(label, page, action) {
        var b = add(nav, el("button", "", label));
        b.type = "button";
        b.setAttribute("data-page", action);
        b.disabled = page < 0 || page >= pages || page === state.page;
        b.addEventListener("click", function () {
          state.page = page;
          renderPage();
          writeQuery();
          if (which === 1) { byId("cases").scrollIntoView({ block: "start" }); }
        });
      }
      button("\u00ab First", 0, "first");
      button("\u2039 Previous", state.page - 1, "previous");
      add(nav, el("span", "where", "Cases " + fmt(first + 1) + DASH + fmt(Math.min(filtered.length, first + PAGE)) +
        " of " + fmt(filtered.length) + " \u00b7 page " + fmt(state.page + 1) + " of " + fmt(pages)));
      button("Next \u203a", state.page + 1, "next");
      button("Last \u00bb", pages - 1, "last");
    });
  }

  function renderPage() {
    rendered = Object.create(null);
    var fragment = doc.createDocumentFragment();
    filtered.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (i) {
      rendered[i] = add(fragment, caseElement(i));
    });
    list.textContent = "";
    list.appendChild(fragment);
    renderPagers();
  }

  // --- one case --------------------------------------------------------------------------------
  function pill(code) {
    var v = verdicts[code] || { css: "", label: String(code), value: String(code) };
    var node = el("span", "pill " + v.css, v.label);
    node.title = v.value + ": " + (v.hint || "");
    return node;
  }

  function caseElement(i) {
    var r = cases[i];
    var problem = r.r < 4;
    var claims = claimsOf(r);
    var counts = verdicts.map(function () { return 0; });
    claims.forEach(function (c) { counts[c[1]] += 1; });
    var fresh = newCount(r);
    var node = el("details", "case rank-" + r.r + (problem ? " problem" : ""));
    node.id = "case=" + encodeURIComponent(r.i);
    node.setAttribute("data-case-id", r.i);
    node.setAttribute("data-status", r.s || "ok");
    node.setAttribute("data-rank", String(r.r));
    node.setAttribute("data-verdicts", config.order.filter(function (code) { return counts[code]; })
      .map(function (code) { return verdicts[code].value; }).join(" "));
    node.setAttribute("data-failing", failing(r).map(function (j) { return evaluators[j].name; }).join(" "));
    node.setAttribute("data-new", String(fresh));

    var summary = add(node, el("summary"));
    add(summary, el("span", "chev"));
    var title = add(summary, el("span", "case-title"));
    var idLine = add(title, el("span", "case-id"));
    add(idLine, el("span", "", r.i));
    if (fresh) { add(idLine, el("span", "tag new", fresh + " new")); }
    var accepted = claims.filter(acceptedBy).length;
    if (accepted) { add(idLine, el("span", "tag accepted", "\u2713 " + accepted + " accepted")); }
    if (r.s === "error") { add(idLine, el("span", "tag fail", "error")); }
    if (r.s === "skipped") { add(idLine, el("span", "tag plain", "skipped")); }
    add(title, el("span", "case-query", r.q || "(no query)"));
    var side = add(summary, el("span", "case-side"));
    var chips = add(side, el("span", "chips"));
    resultsOf(r).forEach(function (res, j) {
      if (!res) { return; }
      var name = evaluators[j].name;
      var chip = add(chips, el("span", "chip" + (res[1] === 0 ? " fail" : "") + (res[2] === 1 ? " error" : "")));
      chip.title = name + " (threshold " + score(evaluators[j].threshold, 2) + "): " + str(res[3]);
      chip.appendChild(doc.createTextNode(name + " "));
      add(chip, el("b", "", res[0] != null ? score(res[0], 2) : ["ok", "error", "skipped"][res[2]]));
    });
    if (claims.length) {
      var mix = add(side, el("span", "mix"));
      var parts = [];
      config.order.forEach(function (code) {
        if (!counts[code]) { return; }
        var bar = add(mix, el("span", verdicts[code].css));
        bar.style.flex = String(counts[code]);
        parts.push(counts[code] + " " + verdicts[code].label);
      });
      mix.title = parts.join(", ");
    }
    if (problem) {
      node.open = true;
      fill(node, i);
    }
    node.addEventListener("toggle", function () {
      if (node.open) { fill(node, i); }
    });
    return node;
  }

  function label(parent, text) { return add(parent, el("div", "label", text)); }
  function note(parent, cls, text) { return add(parent, el("p", "note" + (cls ? " " + cls : ""), text)); }

  function verdictItem(r, c, n, anchor, showLocated) {
    var code = c[1];
    var v = verdicts[code];
    var item = el("li");
    item.setAttribute("data-verdict", v.value);
    var box = add(item, el("details", "claim " + v.css + (c[5] ? " located" : "")));
    if (anchor) { box.id = anchor; }
    box.setAttribute("data-verdict", v.value);
    if (isNew(c)) { box.open = true; }
    var head = add(box, el("summary"));
    add(head, el("span", "n", String(n)));
    add(head, pill(code));
    add(head, el("span", "text", claimText(r, c)));
    if (isNew(c)) { add(head, el("span", "tag new", "new")); }
    if (acceptedBy(c)) { add(head, acceptedTag(c)); }
    if (showLocated && !c[5]) { add(head, el("span", "tag plain", "not in text")); }
    if (c[2] != null) { add(head, el("span", "conf", Math.round(c[2] * 100) + "%")); }
    var dl = add(add(box, el("div", "claim-body")), el("dl"));
    function row(term) { add(dl, el("dt", "", term)); return add(dl, el("dd")); }
    var evidence = row("evidence");
    if (c[3] != null && str(c[3])) {
      add(evidence, el("blockquote", "evidence", str(c[3])));
    } else {
      add(evidence, el("span", "muted", "no quote from the context"));
    }
    row("reason").textContent = str(c[4]) || DASH;
    if (c[2] != null) {
      var confidence = row("confidence");
      var meter = add(confidence, el("span", "meter"));
      add(meter, el("span")).style.width = Math.round(c[2] * 100) + "%";
      confidence.appendChild(doc.createTextNode(c[2].toFixed(2)));
    }
    if (c[7] != null) {
      row("agreement").textContent = Math.round(c[7] * 100) + "% of the judge's repeated verdicts";
    }
    if (c[6] && c[6].length) {
      var flags = row("flags");
      c[6].forEach(function (flag) {
        var text = str(flag);
        add(flags, el("span", "flag", config.flags[text] || text.replace(/_/g, " ")));
      });
    }
    return item;
  }

  function responseBlock(parent, r) {
    label(parent, "Response");
    var box = add(parent, el("div", "response"));
    var placed = [];
    claimsOf(r).forEach(function (c, k) { if (c[5]) { placed.push([c[5][0], c[5][1], c, k + 1]); } });
    placed.sort(function (a, b) { return a[0] - b[0]; });
    var at = 0;
    placed.forEach(function (p) {
      if (p[0] > at) { box.appendChild(doc.createTextNode(r.p.slice(at, p[0]))); }
      var c = p[2];
      var v = verdicts[c[1]];
      var kind = isNew(c) ? " is-new" + (acceptedBy(c) ? " is-accepted" : "") : "";
      var mark = add(box, el("a", "claim-mark " + v.css + kind, r.p.slice(p[0], p[1])));
      mark.href = "#" + claimAnchor(r.i, p[3]);
      mark.setAttribute("data-verdict", v.value);
      var said = acceptedBy(c) ? " (newly hallucinated, accepted by @" + acceptedBy(c) + ")" : " (newly hallucinated)";
      mark.title = p[3] + ". " + v.label + (isNew(c) ? said : "") + ": " + str(c[4]);
      add(mark, el("sup", "", String(p[3])));
      at = p[1];
    });
    if (at < r.p.length) { box.appendChild(doc.createTextNode(r.p.slice(at))); }
  }

  function chunksBlock(parent, r) {
    var ratings = r.k;
    var texts = r.t || [];
    var count = Math.max(ratings.length, texts.length);
    label(parent, "Retrieved chunks (" + count + "): relevant to the query?");
    var ol = add(parent, el("ol", "chunks"));
    for (var n = 0; n < count; n += 1) {
      var rating = ratings[n];
      var item = add(ol, el("li"));
      var rowClass = "chunk-row" + (rating ? (rating[0] ? " relevant" : " irrelevant") : "");
      var row = add(item, el(texts[n] != null ? "details" : "div", rowClass));
      var head = texts[n] != null ? add(row, el("summary", "chunk-head")) : add(row, el("div", "chunk-head"));
      add(head, el("span", "n", String(n + 1)));
      if (rating) {
        add(head, el("span", "tag " + (rating[0] ? "pass" : "fail"), rating[0] ? "relevant" : "irrelevant"));
        if (rating[2]) {
          var tag = add(head, el("span", "tag plain", "heuristic"));
          tag.title = "rated by a rule (the query's key terms, the claims that draw on it), not a language model";
        }
        add(head, el("span", "why", str(rating[1])));
      } else {
        add(head, el("span", "why", "not rated"));
      }
      if (texts[n] != null) { add(row, el("div", "chunk", texts[n])); }
    }
  }

  function fill(node, i) {
    if (node.getAttribute("data-filled")) { return; }
    node.setAttribute("data-filled", "true");
    var r = cases[i];
    var box = add(node, el("div", "case-body"));
    if (r.x != null) { note(box, "error", "Could not be judged: " + str(r.x)); }
    var drops = [];
    resultsOf(r).forEach(function (res, j) {
      if (res && res[4] != null) {
        drops.push(evaluators[j].name + " " + score(res[4], 3) + " \u2192 " + (res[0] != null ? score(res[0], 3) : "error"));
      }
    });
    if (drops.length) { note(box, "regressed", "Dropped from the baseline: " + drops.join(", ") + "."); }
    var claims = claimsOf(r);
    var hasResponse = r.p != null;
    if (hasResponse) {
      responseBlock(box, r);
    } else if (r.n === 1) {
      note(box, "", "This case is not in the dataset given, so its response is not shown.");
    } else if (r.n === 2) {
      note(box, "", "The dataset's version of this case differs from the one judged (its query, context or response changed), so its response is not shown.");
    }
    if (claims.length) {
      var lost = claims.filter(function (c) { return !c[5]; }).length;
      if (hasResponse && lost) {
        note(box, "unlocated", plural(lost, "claim") + " could not be found word for word in the response (" +
          (lost > 1 ? "the judge reworded them); they are" : "the judge reworded it); it is") +
          " marked below with \u201cnot in text\u201d.");
      }
      label(box, "Claims (" + claims.length + ")");
      var ol = add(box, el("ol", "claims"));
      claims.forEach(function (c, k) {
        add(ol, verdictItem(r, c, k + 1, claimAnchor(r.i, k + 1), hasResponse));
      });
    } else if (!r.s) {
      note(box, "", "The judge found no claims in this response.");
    }
    if (r.f && r.f.length) {
      label(box, "Needed facts (" + r.f.length + "): does the retrieved context hold them?");
      var facts = add(box, el("ol", "facts"));
      r.f.forEach(function (c, k) { add(facts, verdictItem(r, c, k + 1, null, false)); });
    }
    var rated = Boolean(r.k && r.k.length);
    if (rated) { chunksBlock(box, r); }
    var context = rated ? null : r.t;
    var results = resultsOf(r);
    if (results.some(Boolean) || r.a || hasResponse) {
      var extra = add(box, el("details", "extra"));
      var what = ["Scores"];
      if (hasResponse && !rated) { what.push("retrieved context (" + plural((r.t || []).length, "chunk") + ")"); }
      if (r.a) { what.push("the expected answer"); }
      add(extra, el("summary", "", what.slice(0, -1).join(", ") + (what.length > 1 ? " and " : "") + what[what.length - 1]));
      if (results.some(Boolean)) {
        var table = add(extra, el("table", "stack"));
        var headRow = add(add(table, el("thead")), el("tr"));
        var columns = ["evaluator", "score", "threshold", "result", "why"];
        columns.forEach(function (name, k) {
          add(headRow, el("th", k === 1 || k === 2 ? "num" : "", name));
        });
        var tbody = add(table, el("tbody"));
        results.forEach(function (res, j) {
          if (!res) { return; }
          var tr = add(tbody, el("tr"));
          add(tr, el("td", "", evaluators[j].name));
          add(tr, el("td", "num", score(res[0], 3)));
          add(tr, el("td", "num", score(evaluators[j].threshold, 2)));
          var result = add(tr, el("td"));
          if (res[2] === 1) { add(result, el("span", "tag fail", "error")); }
          else if (res[1] === 0) { add(result, el("span", "tag fail", "fail")); }
          else if (res[1] === 1) { add(result, el("span", "tag pass", "pass")); }
          else { add(result, el("span", "tag plain", ["ok", "error", "skipped"][res[2]])); }
          add(tr, el("td", "", str(res[3])));
          Array.prototype.forEach.call(tr.children, function (td, k) {
            td.setAttribute("data-label", columns[k]);
          });
        });
      }
      if (hasResponse && !rated) {
        label(extra, "Retrieved context");
        if (context && context.length) {
          context.forEach(function (text) { add(extra, el("div", "chunk", text)); });
        } else {
          note(extra, "", "Nothing was retrieved for this case.");
        }
      }
      if (r.a) {
        label(extra, "Expected answer");
        add(extra, el("div", "chunk", r.a));
      }
    }
  }

  // --- going to a case -------------------------------------------------------------------------
  function resetFilters() {
    if (search) { search.value = ""; }
    [byVerdict, byEvaluator, byRetrieval].forEach(function (s) { if (s) { s.value = "any"; } });
    if (onlyNew) { onlyNew.checked = false; }
  }
  function reveal(target, block) {
    // cases off screen are laid out only when seen (content-visibility), so the place of the
    // target settles as the cases around it render: scroll again once they have
    target.scrollIntoView({ block: block });
    requestAnimationFrame(function () {
      target.scrollIntoView({ block: block });
      requestAnimationFrame(function () { target.scrollIntoView({ block: block }); });
    });
  }
  function flash(target) {
    target.classList.remove("flash");
    void target.offsetWidth;
    target.classList.add("flash");
  }
  function showCase(id, claim) {
    var i = index[id];
    if (i === undefined) { return false; }
    if (filtered.indexOf(i) < 0) { resetFilters(); apply(); }
    var page = Math.floor(filtered.indexOf(i) / PAGE);
    if (page !== state.page || !rendered[i]) { state.page = page; renderPage(); }
    writeQuery();
    var node = rendered[i];
    node.open = true;
    fill(node, i);
    var target = claim ? byId(claimAnchor(id, claim)) : null;
    if (target) {
      target.open = true;
      flash(target);
      reveal(target, "center");
    } else {
      reveal(node, "start");
    }
    return true;
  }
  function fromHash(hash) {
    var found = /^#case=([^&]*)(?:&claim=(\d+))?$/.exec(hash);
    if (!found) { return false; }
    var id;
    try { id = decodeURIComponent(found[1]); } catch (error) { return false; }
    return showCase(id, found[2] ? Number(found[2]) : 0);
  }

  // --- the URL keeps the filters ---------------------------------------------------------------
  function selectValue(node, value) {
    if (!node || value === null) { return; }
    for (var k = 0; k < node.options.length; k += 1) {
      if (node.options[k].value === value) { node.value = value; }
    }
  }
  function readQuery() {
    var params;
    try { params = new URLSearchParams(location.search); } catch (error) { return; }
    selectValue(byVerdict, params.get("verdict"));
    selectValue(byEvaluator, params.get("evaluator"));
    selectValue(byRetrieval, params.get("retrieval"));
    if (search && params.get("q")) { search.value = params.get("q"); }
    if (onlyNew && params.get("new") === "1") { onlyNew.checked = true; }
    var hide = (params.get("hide") || "").split(",");
    toggles.forEach(function (box) {
      if (hide.indexOf(box.getAttribute("data-toggle-verdict")) >= 0) { box.checked = false; }
    });
    var page = parseInt(params.get("page") || "1", 10);
    state.page = page > 0 ? page - 1 : 0;
  }
  function writeQuery() {
    var params = new URLSearchParams();
    if (select(byVerdict) !== "any") { params.set("verdict", byVerdict.value); }
    if (select(byEvaluator) !== "any") { params.set("evaluator", byEvaluator.value); }
    if (select(byRetrieval) !== "any") { params.set("retrieval", byRetrieval.value); }
    if (search && search.value.trim()) { params.set("q", search.value.trim()); }
    if (onlyNew && onlyNew.checked) { params.set("new", "1"); }
    var hidden = toggles.filter(function (box) { return !box.checked; })
      .map(function (box) { return box.getAttribute("data-toggle-verdict"); });
    if (hidden.length) { params.set("hide", hidden.join(",")); }
    if (state.page > 0) { params.set("page", String(state.page + 1)); }
    var query = params.toString();
    try {
      history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
    } catch (error) { /* some browsers refuse for file: URLs; the filters still work */ }
  }

  // --- start, once the cases are unpacked ----------------------------------------------------
  function start(records) {
    cases = records;
    cases.forEach(function (r, i) { if (!(r.i in index)) { index[r.i] = i; } });
    order = cases.map(function (r, i) { return i; });
    order.sort(function (a, b) { return (cases[a].r - cases[b].r) || (a - b); });
    filtered = order;

    // --- wiring ----------------------------------------------------------------------------------
    var pending = false;
    function schedule() {
      if (pending) { return; }
      pending = true;
      setTimeout(function () {
        pending = false;
        state.page = 0;
        apply();
        writeQuery();
      }, 0);
    }
    [search, byVerdict, byEvaluator, byRetrieval, onlyNew].forEach(function (input) {
      if (input) { input.addEventListener(input.type === "search" ? "input" : "change", schedule); }
    });
    toggles.forEach(function (box) {
      box.addEventListener("change", function () { applyToggles(); writeQuery(); });
    });
    doc.addEventListener("click", function (event) {
      var link = event.target.closest("a.claim-mark, a.case-link");
      if (link && link.hash && fromHash(link.hash)) {
        event.preventDefault();
        try { history.replaceState(null, "", location.pathname + location.search + link.hash); } catch (error) { /* file: URL */ }
        return;
      }
      var action = event.target.closest("button[data-action]");
      if (!action) { return; }
      var what = action.getAttribute("data-action");
      if (what === "only-new" && onlyNew) {
        resetFilters();
        onlyNew.checked = true;
        state.page = 0;
        apply();
        writeQuery();
        byId("cases").scrollIntoView({ block: "start" });
        return;
      }
      Object.keys(rendered).forEach(function (i) {
        rendered[i].open = what === "expand";
      });
    });
    window.addEventListener("hashchange", function () { fromHash(location.hash); });

    // --- totals gathered while the page was written ----------------------------------------------
    Array.prototype.slice.call(doc.querySelectorAll("[data-total]")).forEach(function (node) {
      var what = node.getAttribute("data-total");
      if (what === "claims") {
        node.textContent = ", " + plural(totals.claims, "claim");
      } else if (what.indexOf("verdict:") === 0) {
        node.textContent = fmt(totals.verdicts[codeOf[what.slice(8)]] || 0);
      } else if (what === "unverifiable") {
        node.textContent = fmt(totals.unverifiable || 0);
      }
    });
    var missing = byId("missing-note");
    if (missing && config.dataset && totals.missing) {
      missing.textContent = fmt(totals.missing) + " of " + plural(totals.cases, "case") +
        " are missing from the dataset given or differ from the judged version, so their responses are not shown.";
      missing.hidden = false;
      byId("notices").hidden = false;
    }
    Array.prototype.slice.call(doc.querySelectorAll(".js-only")).forEach(function (node) {
      node.hidden = false;
    });
    if (byRetrieval && !totals.facts && !totals.chunks) { byRetrieval.closest("label").hidden = true; }
    readQuery();
    apply();
    if (location.hash.length > 1) { fromHash(location.hash); }
    body.setAttribute("data-ready", "true");
    if (window.performance && performance.mark) { performance.mark("ragaliq:ready"); }
    setTimeout(buildWhenIdle, 0);
  }

  // --- the cases' data: deflated JSON in base64, unpacked by the browser itself -----------------
  function unpack(node) {
    var binary = atob(node.textContent);
    var bytes = new Uint8Array(binary.length);
    for (var k = 0; k < binary.length; k += 1) { bytes[k] = binary.charCodeAt(k); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).text();
  }
  function unreadable(why) {
    if (empty) {
      empty.textContent = "The cases could not be read: " + why;
      empty.hidden = false;
    }
    body.setAttribute("data-ready", "error");
  }
  var packed = byId("rq-cases");
  if (!packed) {
    start([]);
  } else if (typeof DecompressionStream === "undefined") {
    unreadable("this browser cannot unpack them; open the page in Chrome or Edge 80, Firefox 113, Safari 16.4 or later.");
  } else {
    unpack(packed).then(function (text) { start(JSON.parse(text)); }, function (error) { unreadable(String(error)); });
  }
}());
