# Homebrew formula for ka-hooks: the prebuilt release binaries, no Rust needed.
#
# A template: scripts/release.sh writes dist/homebrew/ka-hooks.rb with @VERSION@, @RELEASE_URL@
# and each tarball's @SHA256_<target>@ filled in; that file goes to the tap.
class KaHooks < Formula
  desc "Hooks system of the ka coding agent, and hook commands for Claude Code and others"
  homepage "https://github.com/ka-agent/ka-hooks"
  version "@VERSION@"
  license any_of: ["MIT", "Apache-2.0"]

  on_macos do
    on_arm do
      url "@RELEASE_URL@/ka-hooks-@VERSION@-aarch64-apple-darwin.tar.gz"
      sha256 "@SHA256_aarch64-apple-darwin@"
    end
    on_intel do
      url "@RELEASE_URL@/ka-hooks-@VERSION@-x86_64-apple-darwin.tar.gz"
      sha256 "@SHA256_x86_64-apple-darwin@"
    end
  end

  on_linux do
    on_arm do
      url "@RELEASE_URL@/ka-hooks-@VERSION@-aarch64-unknown-linux-musl.tar.gz"
      sha256 "@SHA256_aarch64-unknown-linux-musl@"
    end
    on_intel do
      url "@RELEASE_URL@/ka-hooks-@VERSION@-x86_64-unknown-linux-musl.tar.gz"
      sha256 "@SHA256_x86_64-unknown-linux-musl@"
    end
  end

  def install
    bin.install "ka-hooks"
  end

  def caveats
    <<~EOS
      `ka-hooks install claude --write` registers #{HOMEBREW_PREFIX}/bin/ka-hooks, a link that
      `brew upgrade` keeps valid, in Claude Code's settings.
    EOS
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/ka-hooks --version")
  end
end
