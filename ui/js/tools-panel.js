// The settings window's "Tools" section: every configured command client tool with its
// diagnostics, the MCP servers with their state and tools (mcp-panel.js), one checkbox per
// character, and "Reload tools". The core decides everything (src-tauri/src/commands/tools.rs →
// yui_core::tools::configured); this only renders and forwards.

import { invoke } from "./ipc.js";
import { el, setStatus } from "./panels.js";
import { anyStarting, mcpSection } from "./mcp-panel.js";

// While a server is starting, the section asks again this often (and not once none is).
const STARTING_POLL_MS = 1000;
let poll = null;

function render(root, report) {
  const presets = report.presets ?? [];
  const head = el(
    "p",
    { className: "muted small" },
    report.path ? `Defined in ${report.path}` : "No config directory found.",
    report.disabled ? " — all turned off by --no-client-tools." : "",
  );
  const problems = (report.diagnostics ?? []).length
    ? el("ul", { className: "tool-diagnostics warning" }, ...report.diagnostics.map((d) => el("li", {}, d)))
    : null;
  const rows = (report.definitions ?? []).map((d) => {
    const boxes = presets.map((p) => {
      const box = el("input", { type: "checkbox", checked: (d.enabledFor ?? []).includes(p.id), disabled: report.disabled });
      box.dataset.tool = d.name;
      box.dataset.preset = p.id;
      box.addEventListener("change", async () => {
        box.disabled = true;
        try {
          render(root, await invoke("tools_enable", { preset: p.id, name: d.name, enabled: box.checked }));
          setStatus("");
        } catch (err) {
          box.checked = !box.checked;
          box.disabled = false;
          setStatus(err.message, true);
        }
      });
      return el("label", { className: "switch tool-for" }, box, el("span", {}, p.name));
    });
    const diag = (d.diagnostics ?? []).map((m) => el("p", { className: "warning small" }, m));
    return el(
      "li",
      { className: "tool", dataset: { toolName: d.name } },
      el("div", {}, el("strong", {}, d.name), el("span", { className: "muted small" }, `  ${d.command} · ${d.executionTimeoutMs} ms`)),
      el("p", { className: "muted small" }, d.description),
      ...diag,
      el("div", { className: "row" }, ...boxes),
    );
  });
  const list = rows.length
    ? el("ul", { className: "tool-list" }, ...rows)
    : el("p", { className: "muted small" }, "No command tools are configured. See docs/command-tools.md.");
  const toggle = async (preset, name, enabled, box) => {
    box.disabled = true;
    try {
      render(root, await invoke("tools_enable", { preset, name, enabled }));
      setStatus("");
    } catch (err) {
      box.checked = !box.checked;
      box.disabled = false;
      setStatus(err.message, true);
    }
  };
  const mcp = mcpSection(report.mcp, presets, toggle);
  const reload = el("button", { type: "button", id: "tools-reload" }, "Reload tools");
  reload.addEventListener("click", async () => {
    reload.disabled = true;
    try {
      render(root, await invoke("tools_reload"));
      setStatus("Tools reloaded; the next turn uses them.");
    } catch (err) {
      setStatus(err.message, true);
      reload.disabled = false;
    }
  });
  root.replaceChildren(el("h2", {}, "Tools"), head, problems, list, mcp, el("div", { className: "row" }, reload));
  clearTimeout(poll);
  if (anyStarting(report)) {
    poll = setTimeout(async () => {
      if (!root.isConnected) return;
      try {
        render(root, await invoke("tools_list"));
      } catch (err) {
        setStatus(err.message, true);
      }
    }, STARTING_POLL_MS);
  }
}

/** Mount the Tools section into `root`. */
export async function mountTools(root) {
  render(root, await invoke("tools_list"));
}
