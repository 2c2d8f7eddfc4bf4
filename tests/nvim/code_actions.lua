-- Code actions from a real Neovim (0.7+, headless), the way a user's client runs them:
--   quickfix:   a kernel with BUFFER_NUM = 1 gets a single-buffer finding; the quick fix offered
--               for it is requested with the finding as context and its WorkspaceEdit applied.
--   suggestion: "Optimize with SAGE" starts an episode (workspace/executeCommand answers at once)
--               whose end comes as sage/episode and a message; the rewrite's diff is shown
--               (window/showDocument); the rewrite is applied to the kernel and host.py, which
--               logs nothing until the buffers are written: then sage/decision says accepted, and
--               the written kernel is evaluated by the server.
--
-- Run: SAGE_NVIM_E2E=/path/config.json nvim --headless -u NONE -i NONE -n -c 'luafile code_actions.lua'
-- Each phase records what it saw under result.<phase> (with .error if it failed) and the next
-- phase still runs; the Python test asserts on the record.

local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local lsp = dofile(here .. "common.lua")
local result = lsp.result

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
end

local function quickfix(cfg, client_id, out)
  local bufnr = lsp.open(cfg.quickfix.kernel, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  -- Static findings are published on open, without a save.
  if not lsp.wait_for(cfg.timeout_ms, function()
    return lsp.has_code(bufnr, cfg.quickfix.code)
  end) then
    out.diagnostics = lsp.diagnostics(bufnr)
    error(string.format("no %q diagnostic within %d ms of opening the kernel", cfg.quickfix.code, cfg.timeout_ms))
  end
  local d = lsp.find_diagnostic(bufnr, cfg.quickfix.code)
  out.finding = { line = d.lnum + 1, message = d.message }
  -- The context the client sends: its diagnostics on that line, converted back to LSP shape
  -- (what vim.lsp.buf.code_action does in 0.7; later versions dropped this helper).
  local line_diagnostics = vim.lsp.diagnostic.get_line_diagnostics and
      vim.lsp.diagnostic.get_line_diagnostics(bufnr, d.lnum, nil, client_id) or { {
        range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
        severity = d.severity, code = d.code, source = d.source, message = d.message,
      } }
  local context = vim.tbl_filter(function(x)
    return x.code == cfg.quickfix.code
  end, line_diagnostics)
  if #context == 0 then
    error("vim.lsp.diagnostic.get_line_diagnostics has no " .. cfg.quickfix.code .. " on line " .. d.lnum + 1)
  end
  local actions = lsp.code_actions(bufnr, context[1].range, context)
  out.actions = lsp.describe_actions(actions)
  local fix = lsp.find_action(actions, function(a)
    return a.kind == "quickfix" and a.edit ~= nil and a.title:find(cfg.quickfix.title, 1, true) == 1
  end)
  if not fix then
    error(string.format("no quickfix titled %q among %s", cfg.quickfix.title, vim.inspect(out.actions)))
  end
  vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding)
  out.applied = fix.title
  local _, decl = lsp.find_line(bufnr, cfg.quickfix.decl)
  out.decl_after = decl
  out.modified = vim.bo[bufnr].modified
  -- The edit reaches the server as a didChange; the finding it fixed must go.
  out.cleared = lsp.wait_for(cfg.timeout_ms, function()
    return not lsp.has_code(bufnr, cfg.quickfix.code)
  end)
  out.diagnostics = lsp.diagnostics(bufnr)
end

-- sage.showMemory's count of episodes still open in the memory (0 when no memory exists yet).
local function open_episodes(client_id, bufnr)
  local overview = lsp.execute(client_id, bufnr, { command = "sage.showMemory", arguments = {} }, 60000)
  return overview.exists and overview.open_episodes or 0
end

local function start_episode(cfg, client_id, bufnr, out)
  local top = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } }
  local actions = lsp.code_actions(bufnr, top)
  out.before = lsp.describe_actions(actions)
  local start = lsp.find_action(actions, function(a)
    return a.title == "Optimize with SAGE"
  end)
  if not start or type(start.command) ~= "table" then
    error("no \"Optimize with SAGE\" code action with a command among " .. vim.inspect(out.before))
  end
  -- The command answers at once; the episode's end comes as sage/episode and a message.
  local t0 = lsp.now_ms()
  out.optimize = lsp.execute(client_id, bufnr, start.command, 10000)
  out.optimize_ms = lsp.now_ms() - t0
  if not lsp.wait_for(cfg.optimize_timeout_ms, function()
    return result.episodes ~= nil
  end, 100) then
    error("no sage/episode notification within " .. cfg.optimize_timeout_ms .. " ms")
  end
  out.episode = result.episodes[1]
  lsp.step("optimized")
end

-- "SAGE: show the rewrite's diff": the server writes the diff and asks Neovim to show it.
local function show_diff(client_id, bufnr, actions, out)
  local action = lsp.find_action(actions, function(a)
    return a.title == "SAGE: show the rewrite's diff"
  end)
  if not action then
    error("no \"SAGE: show the rewrite's diff\" action among " .. vim.inspect(out.after))
  end
  local answer = lsp.execute(client_id, bufnr, action.command, 20000)
  local shown = vim.api.nvim_get_current_buf()
  out.diff = {
    answer = answer,
    buffer = vim.api.nvim_buf_get_name(shown),
    first_line = vim.api.nvim_buf_get_lines(shown, 0, 1, false)[1],
    text = buffer_text(shown),
  }
  vim.api.nvim_set_current_buf(bufnr)
end

local function suggestion(cfg, client_id, out)
  local bufnr = lsp.open(cfg.suggestion.kernel, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  local top = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } }
  start_episode(cfg, client_id, bufnr, out)

  local actions = lsp.code_actions(bufnr, top)
  out.after = lsp.describe_actions(actions)
  local rewrite = lsp.find_action(actions, function(a)
    return a.title:find("SAGE rewrite:", 1, true) == 1
  end)
  if not rewrite then
    error("no \"SAGE rewrite:\" code action after the episode among " .. vim.inspect(out.after))
  end
  out.rewrite = { title = rewrite.title, kind = rewrite.kind, preferred = rewrite.isPreferred, files = {},
    command = type(rewrite.command) == "table" and rewrite.command.command or vim.NIL }
  if not rewrite.edit then
    error("the rewrite action lacks its edit: " .. vim.inspect(out.rewrite))
  end
  show_diff(client_id, bufnr, actions, out)

  -- Apply the edit as the client does: only buffers change, so nothing is decided yet.
  vim.lsp.util.apply_workspace_edit(rewrite.edit, client.offset_encoding)
  local kernel_uri = vim.uri_from_bufnr(bufnr)
  for uri, edits in pairs(rewrite.edit.changes or {}) do
    table.insert(out.rewrite.files, {
      path = vim.uri_to_fname(uri),
      new_text = edits[1].newText,
      edits = #edits,
      buffer = buffer_text(vim.uri_to_bufnr(uri)),
    })
  end
  lsp.step("rewrite_applied")
  vim.wait(cfg.unsaved_ms, function()
    return result.decisions ~= nil
  end, 100)
  out.unsaved = { decisions = result.decisions or {}, open_episodes = open_episodes(client_id, bufnr),
    messages = vim.deepcopy(result.messages or {}) }

  -- Write every changed buffer: host.py first, the kernel last, so the evaluation its save
  -- starts sees both; :write the kernel even when only host.py changed (the save evaluates).
  for uri, _ in pairs(rewrite.edit.changes or {}) do
    if uri ~= kernel_uri then
      vim.api.nvim_buf_call(vim.uri_to_bufnr(uri), function()
        vim.cmd("write")
      end)
    end
  end
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd("write")
  end)
  lsp.step("rewrite_written")
  if not lsp.wait_for(cfg.timeout_ms, function()
    return result.decisions ~= nil
  end, 50) then
    error("no sage/decision within " .. cfg.timeout_ms .. " ms of writing the rewrite")
  end
  out.decision = result.decisions[1]
  out.open_episodes_after = open_episodes(client_id, bufnr)
  lsp.step("accepted")
  out.after_accept = lsp.describe_actions(lsp.code_actions(bufnr, top))

  -- The written rewrite is evaluated on save like any edit: its summary lens must say correct.
  local lenses, correct = lsp.wait_for_lens(bufnr, "SAGE: correct", cfg.timeout_ms)
  out.lenses = lenses
  out.evaluated_correct = correct
  out.diagnostics = lsp.diagnostics(bufnr)
end

local function record(name)
  return function(_, params)
    result[name] = result[name] or {}
    params.at_ms = lsp.now_ms()
    table.insert(result[name], params)
  end
end

lsp.main(function(cfg)
  vim.o.hidden = true
  local client_id = lsp.start({
    ["sage/suggestion"] = function(_, params)
      result.notifications = result.notifications or {}
      table.insert(result.notifications, {
        uri = params.uri,
        title = params.title,
        diff = params.diff,
        speedup = params.speedup,
        estimated = params.estimated,
        at_ms = lsp.now_ms(),
      })
    end,
    ["sage/episode"] = record("episodes"),
    ["sage/decision"] = record("decisions"),
    -- Neovim 0.7 has no window/showDocument of its own; the README's setup adds this handler.
    ["window/showDocument"] = function(_, params)
      vim.cmd("edit " .. vim.fn.fnameescape(vim.uri_to_fname(params.uri)))
      return { success = true }
    end,
  })
  lsp.phase("quickfix", function(out)
    quickfix(cfg, client_id, out)
  end)
  lsp.phase("suggestion", function(out)
    suggestion(cfg, client_id, out)
  end)
  lsp.stop(client_id)
end)
