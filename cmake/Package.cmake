# `cpack -G DEB` in the build directory: two Debian packages (docs/install.md).
#   settle      settled, settle-check, the systemd unit, the docs, /etc/settle/settled.toml (a
#               conffile), the `settle` system user (scripts/debian/postinst)
#   settle-dev  the participant SDK: headers, static libraries, CMake and pkg-config files
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME settle)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Settle maintainers <settle@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Settle: a distributed transaction coordinator")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
# DESTDIR staging: the unit (written at install time) names /usr/bin, and /etc stays /etc.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL server etc dev)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_COMPONENT_SERVER_GROUP server)
set(CPACK_COMPONENT_ETC_GROUP server)
set(CPACK_COMPONENT_DEV_GROUP dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME settle)
set(CPACK_DEBIAN_SERVER_DESCRIPTION
    "Settle transaction coordinator\n TCC, saga, transactional message and XA transactions over HTTP, durable\n on an embedded SQLite database or PostgreSQL; speaks DTM's protocol.")
# dpkg-shlibdeps (dpkg-dev) names the libraries settled links; passwd gives useradd.
set(CPACK_DEBIAN_SERVER_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "passwd")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/scripts/debian/postinst ${PROJECT_SOURCE_DIR}/scripts/debian/prerm
    ${PROJECT_SOURCE_DIR}/scripts/debian/postrm ${PROJECT_SOURCE_DIR}/scripts/debian/conffiles)
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME settle-dev)
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "Settle participant SDK (C++)\n Join Settle transactions from C++: TCC, saga, messages and XA, the barrier,\n idempotent entry points. find_package(Settle) gives Settle::sdk (and Settle::sdk_grpc,\n Settle::sdk_grpc_client for gRPC).")
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libsqlite3-dev, libpq-dev, libssl-dev, libboost-dev, nlohmann-json3-dev, pkg-config")
# Settle::sdk_grpc and Settle::sdk_grpc_client need these; Settle::sdk does not.
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "libgrpc++-dev, libprotobuf-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_ARCHITECTURE amd64)

include(CPack)
