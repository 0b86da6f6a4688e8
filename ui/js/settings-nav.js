// The settings window's section list: one entry per top-level <section> of the page that has an
// id and a heading (its first h2, else its aria-label), in page order, built from the page as it
// is, so a section added to settings.html shows up with no change here. One section shows at a
// time; the address says which (`settings.html#tools`, `#character/kai`: a section and an
// argument, such as the character a panel should show). The shell opens settings at a section
// (window_open's `section`); panels hear `yui:settings-section` {id, arg} when theirs is shown.

/** The page's sections that get an entry: direct children of body with an id and a heading. */
export function pageSections(root = document.body) {
  return [...root.children].filter((s) => s.tagName === "SECTION" && s.id && heading(s));
}

/** A section's entry text: its first h2, else its aria-label. */
export function heading(section) {
  const h = section.querySelector("h2");
  return (h?.textContent || section.getAttribute("aria-label") || "").trim();
}

/** `#id/arg` → {id, arg}. */
export function parseHash(hash) {
  const [id = "", ...rest] = decodeURIComponent(String(hash).replace(/^#/, "")).split("/");
  return { id, arg: rest.join("/") };
}

/** Build the list into `nav` and show the section the address names (else the first). */
export function mountNav(nav, root = document.body) {
  const sections = pageSections(root);
  const links = new Map();
  const list = document.createElement("ul");
  for (const s of sections) {
    const a = document.createElement("a");
    a.href = `#${s.id}`;
    a.dataset.section = s.id;
    a.textContent = heading(s);
    const li = document.createElement("li");
    li.append(a);
    list.append(li);
    links.set(s.id, a);
    s.dataset.page = "";
  }
  nav.replaceChildren(list);
  root.classList.add("with-nav");

  // A panel that draws its own heading later renames its entry.
  const relabel = new MutationObserver(() => {
    for (const s of sections) {
      const a = links.get(s.id);
      const text = heading(s);
      if (text && a.textContent !== text) a.textContent = text;
    }
  });
  for (const s of sections) relabel.observe(s, { childList: true, subtree: true, characterData: true });

  let shown = null;
  const show = () => {
    const { id, arg } = parseHash(location.hash);
    const target = sections.find((s) => s.id === id) ?? sections[0];
    if (!target) return;
    for (const s of sections) s.hidden = s !== target;
    for (const [sid, a] of links) {
      if (sid === target.id) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    root.dataset.section = target.id;
    if (shown !== target) target.scrollIntoView?.({ block: "start" });
    shown = target;
    document.dispatchEvent(new CustomEvent("yui:settings-section", { detail: { id: target.id, arg } }));
  };
  window.addEventListener("hashchange", show);
  show();
  return { sections, show };
}
