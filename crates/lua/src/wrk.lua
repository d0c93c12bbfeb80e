-- The `wrk` table of wrk's scripting API (wrk's SCRIPTING document), as herd provides it. herd
-- fills in scheme, host, port, path, lookup and connect before a script runs.

-- Header names are case-insensitive: `wrk.headers["Content-Type"]` and `["content-type"]` are
-- the same entry, kept under the lower-case name as wrk does.
local header_names = {
   __newindex = function(t, k, v) rawset(t, string.lower(k), v) end,
   __index = function(t, k) return rawget(t, string.lower(k)) end,
}

wrk = {
   scheme  = "http",
   host    = "localhost",
   port    = nil,
   method  = "GET",
   path    = "/",
   headers = setmetatable({}, header_names),
   body    = nil,
   thread  = nil,
}

-- One request as bytes; arguments left out take the wrk table's values.
function wrk.format(method, path, headers, body)
   method  = method  or wrk.method
   path    = path    or wrk.path
   headers = headers or wrk.headers
   body    = body    or wrk.body

   local lines = { method .. " " .. path .. " HTTP/1.1" }
   local host = false
   for name, value in pairs(headers) do
      local lower = string.lower(name)
      if lower == "host" then host = true end
      if lower ~= "content-length" then
         lines[#lines + 1] = name .. ": " .. tostring(value)
      end
   end
   if not host and wrk.headers["host"] then
      lines[#lines + 1] = "host: " .. wrk.headers["host"]
   end
   if body then
      lines[#lines + 1] = "content-length: " .. #body
   end
   lines[#lines + 1] = ""
   lines[#lines + 1] = body or ""
   return table.concat(lines, "\r\n")
end

-- What herd calls in each thread's state before the run: the Host header, the script's
-- init(args), then the request built once (the static request, unless request() exists).
function wrk.init(args)
   if not wrk.headers["host"] then
      local host = wrk.host
      if host:find(":") then host = "[" .. host .. "]" end
      if wrk.port then host = host .. ":" .. wrk.port end
      wrk.headers["host"] = host
   end
   if type(init) == "function" then
      init(args)
   end
   local req = wrk.format()
   wrk.request = function() return req end
end
