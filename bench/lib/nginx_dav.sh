# Sourced by the benchmarks that need an HTTP cache server: starts nginx
# (Debian's nginx-light) with WebDAV PUT/GET on a free port of 127.0.0.1,
# serving DIR/cache. Sets nginx_pid and nginx_port; nginx_stop stops it (call
# it from the caller's EXIT trap).
#   nginx_start DIR
nginx_start() {
  local dir=$1 bin user_line=""
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
    { echo "nginx is not installed (apt-get install nginx-light)" >&2; return 1; }
  bin=$(command -v nginx || echo /usr/sbin/nginx)
  nginx_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$dir/cache" "$dir/tmp"
  [ "$(id -u)" -eq 0 ] && user_line="user root;"
  cat >"$dir/nginx.conf" <<CONF
$user_line
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  server {
    listen 127.0.0.1:$nginx_port;
    root $dir/cache;
    client_max_body_size 0;
    location / {
      dav_methods PUT;
      create_full_put_path on;
      dav_access user:rw;
    }
  }
}
CONF
  "$bin" -c "$dir/nginx.conf" -p "$dir" -e "$dir/error.log"
  for _ in $(seq 50); do [ -s "$dir/nginx.pid" ] && break; sleep 0.1; done
  nginx_pid=$(cat "$dir/nginx.pid")
  curl -fsS -X PUT --data-binary probe "http://127.0.0.1:$nginx_port/probe" >/dev/null &&
    [ "$(curl -fsS "http://127.0.0.1:$nginx_port/probe")" = probe ] ||
    { cat "$dir/error.log" >&2; echo "nginx does not store PUTs" >&2; return 1; }
  rm -f "$dir/cache/probe"
}

nginx_stop() {
  if [ -n "${nginx_pid:-}" ] && kill -0 "$nginx_pid" 2>/dev/null; then
    kill -QUIT "$nginx_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$nginx_pid" 2>/dev/null || true
  fi
}
