-- Shared by the Neovim end-to-end scripts (save_cycle.lua, code_actions.lua): the config, the
-- JSON record, the server start and stop, and what the editor shows (diagnostics, lenses,
-- code actions). Loaded with dofile() by a script run through `luafile`; works on Neovim 0.7.
--
-- Every wait is bounded and every error is caught by M.main, so Neovim always quits and the
-- result file always says what happened.

local M = { result = { steps = {}, ms = {} } }
local started = vim.loop.hrtime()

function M.now_ms()
  return math.floor((vim.loop.hrtime() - started) / 1e6)
end

function M.step(name)
  table.insert(M.result.steps, name)
  M.result.ms[name] = M.now_ms()
end

function M.load_config()
  local path = os.getenv("SAGE_NVIM_E2E")
  assert(path, "set SAGE_NVIM_E2E to the config JSON")
  local f = assert(io.open(path, "r"))
  M.cfg = vim.json.decode(f:read("*a"))
  f:close()
  return M.cfg
end

local function write_result()
  local f = assert(io.open(M.cfg and M.cfg.result or "sage_nvim_result.json", "w"))
  f:write(vim.json.encode(M.result))
  f:close()
end

-- Run fn, record its error, write the record and quit Neovim whatever happened.
function M.main(fn)
  local ok, err = pcall(function()
    M.load_config()
    fn(M.cfg)
  end)
  if not ok then
    M.result.error = tostring(err)
  end
  pcall(write_result)
  vim.cmd("qall!")
end

-- Run one phase of a script: its error goes to result[name].error and the next phase still runs.
function M.phase(name, fn)
  M.result[name] = M.result[name] or {}
  local ok, err = pcall(fn, M.result[name])
  if not ok then
    M.result[name].error = tostring(err)
  end
  M.step(name .. (ok and "_done" or "_failed"))
end

-- Start the server with the config's command and settings; wait until it is initialized.
function M.start(handlers)
  local cfg = M.cfg
  local all = {
    ["window/showMessage"] = function(_, params)
      M.result.messages = M.result.messages or {}
      table.insert(M.result.messages, params.message)
    end,
  }
  for method, h in pairs(handlers or {}) do
    all[method] = h
  end
  local client_id = vim.lsp.start_client({
    name = "sage",
    cmd = cfg.cmd,
    root_dir = cfg.root,
    init_options = cfg.settings,
    on_init = function(client)
      -- Neovim 0.7 does not send settings by itself; a user's config does this.
      client.notify("workspace/didChangeConfiguration", { settings = cfg.settings })
    end,
    on_exit = function(code, signal)
      M.result.server_exit = { code = code, signal = signal, at_ms = M.now_ms() }
    end,
    handlers = all,
  })
  if not client_id then
    error("vim.lsp.start_client returned nil for " .. vim.inspect(cfg.cmd))
  end
  local function ready()
    local c = vim.lsp.get_client_by_id(client_id)
    return (c and c.initialized) or M.result.server_exit ~= nil
  end
  if not vim.wait(cfg.timeout_ms, ready, 50) or M.result.server_exit then
    error("the server did not finish initialize: " .. vim.inspect(M.result.server_exit or "timed out"))
  end
  M.step("initialized")
  return client_id
end

-- Ask the server to shut down (shutdown + exit) and wait for the process to end.
function M.stop(client_id)
  vim.lsp.stop_client(client_id)
  vim.wait(5000, function()
    return M.result.server_exit ~= nil
  end, 50)
  M.step("stopped")
end

-- Open a file in a buffer and attach the client, as a user's autocommand would.
function M.open(path, client_id)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "cpp"
  if not vim.lsp.buf_attach_client(bufnr, client_id) then
    error("vim.lsp.buf_attach_client failed for " .. path)
  end
  return bufnr
end

-- Wait for pred (bounded); also stop waiting when the server died.
function M.wait_for(ms, pred, interval)
  local ok = vim.wait(ms, function()
    return pred() or M.result.server_exit ~= nil
  end, interval or 100)
  return ok and M.result.server_exit == nil and pred()
end

-- What the editor shows for this buffer: every diagnostic, in the shape the tests compare.
function M.diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out, {
      line = d.lnum + 1, -- 1-based, as a user reads it
      col = d.col,
      code = d.code,
      source = d.source,
      severity = d.severity,
      message = d.message,
    })
  end
  return out
end

function M.find_diagnostic(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == "sage" and d.code == code then
      return d
    end
  end
  return nil
end

function M.has_code(bufnr, code)
  return M.find_diagnostic(bufnr, code) ~= nil
end

function M.find_line(bufnr, needle)
  for i, text in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if text:find(needle, 1, true) then
      return i - 1, text
    end
  end
  error(string.format("the buffer has no line containing %q", needle))
end

-- One request to the one client on this buffer; an error or no answer in time raises.
function M.request(bufnr, method, params, timeout_ms)
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, timeout_ms)
  if not responses then
    error(string.format("%s got no answer within %d ms: %s", method, timeout_ms, tostring(err)))
  end
  local results = {}
  for _, r in pairs(responses) do
    if r.err then
      error(method .. " failed: " .. vim.inspect(r.err))
    end
    table.insert(results, r.result)
  end
  if #results == 0 then
    error(method .. ": no client answered")
  end
  return results[1]
end

function M.lens_titles(bufnr)
  local titles = {}
  local lenses = M.request(bufnr, "textDocument/codeLens", { textDocument = { uri = vim.uri_from_bufnr(bufnr) } },
    10000)
  for _, lens in ipairs(lenses or {}) do
    table.insert(titles, { line = lens.range.start.line + 1, title = lens.command and lens.command.title or "" })
  end
  return titles
end

-- The titles of the lenses Neovim has drawn in the buffer (no request: what the user sees).
function M.drawn_lens_titles(bufnr)
  local titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    table.insert(titles, lens.command and lens.command.title or "")
  end
  return titles
end

-- Poll the code lenses until one title starts with prefix (bounded); return all of them.
function M.wait_for_lens(bufnr, prefix, ms)
  local deadline = M.now_ms() + ms
  while true do
    local lenses = M.lens_titles(bufnr)
    for _, l in ipairs(lenses) do
      if l.title:find(prefix, 1, true) == 1 then
        return lenses, true
      end
    end
    if M.now_ms() >= deadline or M.result.server_exit ~= nil then
      return lenses, false
    end
    vim.wait(200)
  end
end

-- textDocument/codeAction as Neovim 0.7's vim.lsp.buf.code_action sends it.
function M.code_actions(bufnr, range, diagnostics)
  return M.request(bufnr, "textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = range,
    context = { diagnostics = diagnostics or {} },
  }, 10000) or {}
end

-- The shape of code actions the tests compare (a bare Command has a string `command`).
function M.describe_actions(actions)
  local out = {}
  for _, a in ipairs(actions) do
    local cmd = type(a.command) == "table" and a.command or nil
    table.insert(out, {
      title = a.title,
      kind = a.kind,
      preferred = a.isPreferred,
      has_edit = a.edit ~= nil,
      command = cmd and cmd.command or a.command,
      diagnostics = vim.tbl_map(function(d)
        return d.code
      end, a.diagnostics or {}),
    })
  end
  return out
end

function M.find_action(actions, pred)
  for _, a in ipairs(actions) do
    if pred(a) then
      return a
    end
  end
  return nil
end

-- workspace/executeCommand through the client, as a code action's command is run.
function M.execute(client_id, bufnr, command, timeout_ms)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client then
    error("the client is gone (server exit: " .. vim.inspect(M.result.server_exit) .. ")")
  end
  local response, err = client.request_sync("workspace/executeCommand",
    { command = command.command, arguments = command.arguments }, timeout_ms, bufnr)
  if not response then
    error(string.format("workspace/executeCommand %s got no answer within %d ms: %s", command.command, timeout_ms,
      tostring(err)))
  end
  if response.err then
    error("workspace/executeCommand " .. command.command .. " failed: " .. vim.inspect(response.err))
  end
  return response.result
end

return M
