//===- main.cpp - Catch2 main for pallasc-unittests --------------*- C++
//-*-===//
//
// The only translation unit that defines Catch2's main; the test sources are
// listed in test/CMakeLists.txt.
//
//===----------------------------------------------------------------------===//

#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
